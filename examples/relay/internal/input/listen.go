package input

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
)

// listenerConfig is the stream.Config every listening input (syslog
// TCP/TLS, JSON lines, RELP, HEC, OTLP) starts from: its name, connection
// limits and PROXY protocol settings, and with t its TLS, whose
// certificate store goes into stats.Certs (SIGHUP reloads it; the status
// page and the metrics show it). The caller sets the address, the handler
// and what is its own.
func listenerConfig(name string, lim *config.ConnLimits, t *config.TLSConfig, stats *ledger.InputStats, env Env) (stream.Config, error) {
	cfg := stream.Config{Name: name, Logger: env.Log}
	lim.Apply(&cfg)
	stats.Proxy = cfg.ProxyProtocol
	if t == nil {
		return cfg, nil
	}
	tc, err := serverTLS(name, t, env)
	if err != nil {
		return cfg, err
	}
	stats.Certs, cfg.TLS = tc.certs, tc.tls
	return cfg, nil
}

// serverTLSConfig is an input's TLS: its certificate store, and the
// tls.Config that serves from it.
type serverTLSConfig struct {
	certs *tlscert.Store
	tls   *tls.Config
}

// serverTLS builds the TLS of input name: a tlscert.Store on the
// configured files (re-read when they change) or, with auto, on the
// relay's self-signed certificate in env.TLSDir; client_ca_file requires
// client certificates signed by its CAs.
func serverTLS(name string, c *config.TLSConfig, env Env) (serverTLSConfig, error) {
	certs, err := tlscert.New(tlscert.Config{CertFile: c.CertFile, KeyFile: c.KeyFile, Auto: c.Auto, Dir: env.TLSDir,
		Logger: env.Log.With("input", name)})
	if err != nil {
		return serverTLSConfig{}, fmt.Errorf("input %s: tls: %w", name, err)
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return serverTLSConfig{}, fmt.Errorf("input %s: tls: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return serverTLSConfig{}, fmt.Errorf("input %s: tls: client_ca_file %s: no certificates", name, c.ClientCAFile)
		}
		base.ClientCAs, base.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return serverTLSConfig{certs: certs, tls: certs.TLSConfig(base)}, nil
}
