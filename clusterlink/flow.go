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
	if f.ClusterLink == nil {
		return nil, fmt.Errorf("flow %s has no cluster_link section", f.Name)
	}
	return forEndpoint(f.Name, "cluster_link", f.ClusterLink)
}

// ForPrimary builds the client of the primary cluster's REST API
// (cluster_link.primary), which a failback sends truncate-and-restore and
// reverse-and-start to; the link has the same name on both ends.
func ForPrimary(f *config.Flow) (*Client, error) {
	if f.ClusterLink == nil || f.ClusterLink.Primary == nil {
		return nil, fmt.Errorf("flow %s has no cluster_link.primary section: a failback is sent to the primary cluster's REST API, which the config does not name", f.Name)
	}
	return forEndpoint(f.Name, "cluster_link.primary", f.ClusterLink.Primary)
}

func forEndpoint(flow, key string, cl *config.ClusterLink) (*Client, error) {
	var tc *tls.Config
	if cl.TLS != nil {
		var err error
		if tc, err = cl.TLS.ClientConfig(); err != nil {
			return nil, fmt.Errorf("flow %s %s: %w", flow, key, err)
		}
	}
	return New(cl.RestURL, cl.ClusterID, cl.Link, cl.Username, cl.Password, tc), nil
}
