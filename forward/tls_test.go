package forward_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward"
)

// testCert returns a PEM certificate and key, self-signed (CA) when parent
// is nil, else signed by parent.
func testCert(t *testing.T, cn string, parent *tls.Certificate, client bool) (certPEM, keyPEM []byte, pair tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	signer, signKey := tmpl, any(key)
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.ExtKeyUsage = nil // a CA constrains nothing
	} else {
		signer = parent.Leaf
		signKey = parent.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return certPEM, keyPEM, pair
}

func TestHECMutualTLS(t *testing.T) {
	caPEM, _, ca := testCert(t, "test CA", nil, false)
	srvPEM, srvKey, _ := testCert(t, "127.0.0.1", &ca, false)
	cliPEM, cliKey, _ := testCert(t, "relay", &ca, true)
	srvPair, err := tls.X509KeyPair(srvPEM, srvKey)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))

	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "relay" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{"text":"Success","code":0}`))
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{srvPair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	ts.StartTLS()
	defer ts.Close()

	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	caFile, certFile, keyFile := write("ca.pem", caPEM), write("cli.pem", cliPEM), write("cli.key", cliKey)

	tests := []struct {
		name string
		tls  forward.TLSConfig
		ok   bool
	}{
		{"files", forward.TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, true},
		{"in memory", forward.TLSConfig{CAPEM: caPEM, CertPEM: cliPEM, KeyPEM: cliKey, MinVersion: tls.VersionTLS13}, true},
		{"no client certificate", forward.TLSConfig{CAPEM: caPEM}, false},
		{"unknown server CA", forward.TLSConfig{CertPEM: cliPEM, KeyPEM: cliKey}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fl failures
			h, err := forward.NewHEC(forward.HECConfig{URL: ts.URL, Token: "t", DisableHealthCheck: true,
				HTTP: forward.HTTPConfig{TLS: buildTLS(t, tt.tls)}})
			require.NoError(t, err)
			defer h.Close()
			err = fl.send(t, h, batchOf("m"))
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, int64(1), h.Stats().EventsSent)
				assert.Empty(t, fl.get(), "%v", fl.messages)
			} else {
				assert.Zero(t, h.Stats().EventsSent)
				assert.NotEmpty(t, fl.get())
			}
		})
	}
}

func TestTLSConfigBuildErrors(t *testing.T) {
	certPEM, keyPEM, _ := testCert(t, "x", nil, false)
	_, otherKey, _ := testCert(t, "y", nil, false)
	tests := []struct {
		name string
		c    forward.TLSConfig
	}{
		{"missing CA file", forward.TLSConfig{CAFile: "/nonexistent/ca.pem"}},
		{"CA file without PEM", forward.TLSConfig{CAFile: os.DevNull}},
		{"cert without key", forward.TLSConfig{CertFile: "a.pem"}},
		{"missing cert files", forward.TLSConfig{CertFile: "/nonexistent/a", KeyFile: "/nonexistent/b"}},
		{"mismatched key", forward.TLSConfig{CertPEM: certPEM, KeyPEM: otherKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.Build()
			require.Error(t, err)
			assert.NotContains(t, err.Error(), string(keyPEM[30:60]), "no key material in errors")
			assert.NotContains(t, err.Error(), string(otherKey[30:60]), "no key material in errors")
		})
	}
	c, err := forward.TLSConfig{}.Build()
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), c.MinVersion)
	assert.False(t, c.InsecureSkipVerify)
}
