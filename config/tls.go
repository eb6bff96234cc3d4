package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/drconsole/drconsole/safefile"
)

// ClientConfig builds the client side *tls.Config these settings describe
// (brokers and the Cluster Linking REST API share it): TLS 1.2 at least,
// the CA file's certificates as roots, the client certificate if set.
func (t *TLS) ClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := safefile.ReadFile(t.CAFile, safefile.SmallLimit)
		if err != nil {
			return nil, fmt.Errorf("tls ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca_file %s: no PEM certificates in it", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		certPEM, err := safefile.ReadFile(t.CertFile, safefile.SmallLimit)
		var keyPEM []byte
		if err == nil {
			keyPEM, err = safefile.ReadFile(t.KeyFile, safefile.SmallLimit)
		}
		var cert tls.Certificate
		if err == nil {
			cert, err = tls.X509KeyPair(certPEM, keyPEM)
		}
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
