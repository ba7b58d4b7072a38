package forward

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// TLSConfig describes TLS for a sink's own connections from files or PEM:
// which servers to trust and which client certificate to present.
// [TLSConfig.Build] makes the *tls.Config that HTTPConfig.TLS,
// SyslogConfig.TLS and otlp.ExporterConfig.TLS take. The zero value
// verifies the server against the system roots and presents no
// certificate.
type TLSConfig struct {
	// CAFile is a PEM file of CA certificates to trust instead of the
	// system roots. Empty means the system roots (plus CAPEM).
	CAFile string
	// CAPEM holds PEM CA certificates, added to CAFile's.
	CAPEM []byte
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// mutual TLS. Both or neither.
	CertFile, KeyFile string
	// CertPEM and KeyPEM are a PEM client certificate and key given
	// in memory; an alternative to CertFile and KeyFile.
	CertPEM, KeyPEM []byte
	// ServerName overrides the name verified in the server certificate
	// (and sent as SNI). Empty means the host of the URL.
	ServerName string
	// MinVersion is the minimum TLS version (tls.VersionTLS12, ...). Zero
	// means TLS 1.2.
	MinVersion uint16

	// DangerousInsecureSkipVerify disables verification of the server's
	// certificate chain and host name: anyone on the path can then read
	// and alter the traffic, tokens included. For throw-away tests only.
	DangerousInsecureSkipVerify bool
}

// Build returns the *tls.Config described by c. It reads the files now;
// errors name the file but never include key material.
func (c TLSConfig) Build() (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         c.MinVersion,
		ServerName:         c.ServerName,
		InsecureSkipVerify: c.DangerousInsecureSkipVerify, //nolint:gosec // explicit, loudly named opt-in
	}
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12
	}
	if c.CAFile != "" || len(c.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if c.CAFile != "" {
			pem, err := os.ReadFile(c.CAFile)
			if err != nil {
				return nil, fmt.Errorf("tls: CA file: %w", err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("tls: CA file %s: no PEM certificates", c.CAFile)
			}
		}
		if len(c.CAPEM) > 0 && !pool.AppendCertsFromPEM(c.CAPEM) {
			return nil, errors.New("tls: CAPEM: no PEM certificates")
		}
		tc.RootCAs = pool
	}
	switch {
	case c.CertFile != "" || c.KeyFile != "":
		if c.CertFile == "" || c.KeyFile == "" {
			return nil, errors.New("tls: CertFile and KeyFile must be set together")
		}
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			// The error of LoadX509KeyPair names files and formats, not keys.
			return nil, fmt.Errorf("tls: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case len(c.CertPEM) > 0 || len(c.KeyPEM) > 0:
		cert, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
		if err != nil {
			return nil, errors.New("tls: CertPEM/KeyPEM: invalid certificate or key")
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// newHTTPClient returns the client a sink owns when none is supplied:
// dial, TLS-handshake and response-header timeouts, idle connections kept
// for reuse (enough for conc requests in flight), HTTP/2 when the server
// offers it over TLS.
func newHTTPClient(tlsConf *tls.Config, timeout time.Duration, conc int) *http.Client {
	if tlsConf == nil {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConf,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          max(conc*2, 16),
		MaxIdleConnsPerHost:   max(conc*2, 2),
		// Bodies are gzipped by the sink; the transport must not add or
		// strip encodings on its own.
		DisableCompression: true,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}
