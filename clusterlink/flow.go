package clusterlink

import (
	"crypto/tls"
	"fmt"

	"github.com/drconsole/drconsole/config"
)

// ForFlow builds the REST client of a cluster-link flow from its config:
// URL, cluster, link, credentials and TLS (monitoring and the runbook's
// promote/failover share it).
func ForFlow(f *config.Flow) (*Client, error) {
	cl := f.ClusterLink
	if cl == nil {
		return nil, fmt.Errorf("flow %s has no cluster_link section", f.Name)
	}
	var tc *tls.Config
	if cl.TLS != nil {
		var err error
		if tc, err = cl.TLS.ClientConfig(); err != nil {
			return nil, fmt.Errorf("flow %s cluster_link: %w", f.Name, err)
		}
	}
	return New(cl.RestURL, cl.ClusterID, cl.Link, cl.Username, cl.Password, tc), nil
}
