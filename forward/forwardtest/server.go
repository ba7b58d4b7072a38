package forwardtest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
)

// startServer starts h on a free port of 127.0.0.1, over TLS with
// httptest's certificate (valid for 127.0.0.1, ::1 and example.com) when
// useTLS is set. Unlike httptest.NewServer it returns an error rather than
// panicking when it cannot listen, so programs that are not tests can use
// it.
func startServer(h http.Handler, useTLS bool) (*httptest.Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("forwardtest: listen on 127.0.0.1: %w", err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	return srv, nil
}

// clientTLSConfig returns a TLS client configuration that trusts srv's
// certificate, or nil when srv does not serve TLS.
func clientTLSConfig(srv *httptest.Server) *tls.Config {
	cert := srv.Certificate()
	if cert == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
