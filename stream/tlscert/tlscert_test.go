package tlscert_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
)

// logs keeps the level and message of each record.
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logs) Enabled(context.Context, slog.Level) bool { return true }
func (h *logs) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (h *logs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logs) WithGroup(string) slog.Handler      { return h }

func (h *logs) count(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if len(m) > len(level.String()) && m[:len(level.String())] == level.String() {
			n++
		}
	}
	return n
}

// serveTLS runs a stream listener with the store's certificate whose
// handler reports each frame.
func serveTLS(t *testing.T, st *tlscert.Store) (net.Addr, chan string) {
	t.Helper()
	frames := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := stream.New(stream.Config{Address: "127.0.0.1:0", TLS: st.TLSConfig(nil), Handler: func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		for {
			b, _, err := f.Next()
			if err != nil {
				return
			}
			frames <- string(b)
		}
	}})
	require.NoError(t, err)
	go func() { done <- ln.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr(), frames
}

// dial makes a TLS connection to addr and returns it with the fingerprint
// of the certificate the server presented.
func dial(t *testing.T, addr net.Addr) (*tls.Conn, tlscert.Fingerprint) {
	t.Helper()
	c, err := tls.Dial("tcp", addr.String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test compares fingerprints
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, tlscert.FingerprintOf(c.ConnectionState().PeerCertificates[0].Raw)
}

func send(t *testing.T, c io.Writer, frames chan string, msg string) {
	t.Helper()
	_, err := io.WriteString(c, msg+"\n")
	require.NoError(t, err)
	select {
	case got := <-frames:
		assert.Equal(t, msg, got)
	case <-time.After(10 * time.Second):
		t.Fatalf("%q not received", msg)
	}
}

// pair is a certificate and key in PEM.
type pair struct{ cert, key []byte }

func newPair(t *testing.T) pair {
	t.Helper()
	c, k, err := tlscert.Generate([]string{"localhost", "127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	return pair{c, k}
}

func fingerprint(t *testing.T, certPEM []byte) tlscert.Fingerprint {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	require.NotNil(t, b)
	return tlscert.FingerprintOf(b.Bytes)
}

// put renames b into place as name, as certbot and Kubernetes replace
// files.
func put(t *testing.T, name string, b []byte) {
	t.Helper()
	tmp := name + ".new"
	require.NoError(t, os.WriteFile(tmp, b, 0o600))
	require.NoError(t, os.Rename(tmp, name))
}

// A certificate swapped on disk is served from the next handshake on,
// while a connection made with the old one keeps sending. A bad new pair
// (a certificate with another's key) is not taken: the certificate in
// use stays, the error is counted, logged once and reported, and Reload
// returns it; once the pair is whole again it is taken.
func TestReloadOnChange(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "relay.crt"), filepath.Join(dir, "relay.key")
	a, b := newPair(t), newPair(t)
	put(t, certFile, a.cert)
	put(t, keyFile, a.key)
	rec := &logs{}
	st, err := tlscert.New(tlscert.Config{CertFile: certFile, KeyFile: keyFile, Logger: slog.New(rec)})
	require.NoError(t, err)
	assert.Equal(t, fingerprint(t, a.cert), st.Fingerprint())
	addr, frames := serveTLS(t, st)

	open, fp := dial(t, addr)
	assert.Equal(t, fingerprint(t, a.cert), fp)
	send(t, open, frames, "<13>before the swap")

	put(t, keyFile, b.key)
	put(t, certFile, b.cert)
	next, fp := dial(t, addr)
	assert.Equal(t, fingerprint(t, b.cert), fp, "the next handshake gets the new certificate")
	send(t, next, frames, "<13>new connection")
	send(t, open, frames, "<13>the open connection keeps sending")
	assert.Equal(t, tlscert.Stats{Reloads: 1}, st.Stats())

	put(t, certFile, a.cert) // with b's key: not a pair
	for range 2 {
		c, fp := dial(t, addr)
		assert.Equal(t, fingerprint(t, b.cert), fp, "the certificate in use is kept")
		send(t, c, frames, "<13>served meanwhile")
	}
	require.Error(t, st.Err())
	assert.Equal(t, tlscert.Stats{Reloads: 1, ReloadErrors: 1}, st.Stats())
	assert.Equal(t, 1, rec.count(slog.LevelError), "one record for one change")
	require.Error(t, st.Reload(), "Reload tries again")
	assert.Equal(t, fingerprint(t, b.cert), st.Fingerprint())

	put(t, keyFile, a.key)
	_, fp = dial(t, addr)
	assert.Equal(t, fingerprint(t, a.cert), fp)
	require.NoError(t, st.Err())
	send(t, open, frames, "<13>still open")
	assert.Equal(t, tlscert.Stats{Reloads: 2, ReloadErrors: 2}, st.Stats())
}

// Reload reads the files even when nothing about them changed that a
// check would see (a file rewritten in place within the same
// modification time and size).
func TestReloadOnDemand(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	a, b := newPair(t), newPair(t)
	// Padded to one size (PEM ignores what follows its blocks), so that
	// b rewritten in place, its times put back, looks unchanged.
	pad := func(p []byte, n int) []byte {
		require.LessOrEqual(t, len(p), n)
		return append(p, bytes.Repeat([]byte("\n"), n-len(p))...)
	}
	put(t, certFile, pad(a.cert, 2048))
	put(t, keyFile, pad(a.key, 1024))
	st, err := tlscert.New(tlscert.Config{CertFile: certFile, KeyFile: keyFile})
	require.NoError(t, err)
	for name, data := range map[string][]byte{certFile: pad(b.cert, 2048), keyFile: pad(b.key, 1024)} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(name, data, 0o600))
		require.NoError(t, os.Chtimes(name, fi.ModTime(), fi.ModTime()))
	}
	assert.Equal(t, fingerprint(t, a.cert), st.Fingerprint(), "no change a check sees")
	require.NoError(t, st.Reload())
	assert.Equal(t, fingerprint(t, b.cert), st.Fingerprint())
}

// Auto makes an ECDSA P-256 certificate for the host's names and
// addresses, keeps it in its directory (the key readable by its owner
// only), and a new Store on the same directory (a restart) serves the
// same one: a sender pinning its fingerprint connects, and one trusting
// it as its own root verifies it for localhost and 127.0.0.1.
func TestAutoSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "tls")
	rec := &logs{}
	first, err := tlscert.New(tlscert.Config{Auto: true, Dir: dir, Logger: slog.New(rec)})
	require.NoError(t, err)
	fp := first.Fingerprint()
	leaf := first.Leaf()
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	require.True(t, ok, "ECDSA key")
	assert.Equal(t, elliptic.P256(), pub.Curve)
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.Contains(t, leaf.DNSNames, host)
	assert.Contains(t, leaf.DNSNames, "localhost")
	assert.True(t, containsIP(leaf.IPAddresses, "127.0.0.1"))
	assert.True(t, containsIP(leaf.IPAddresses, "::1"))
	assert.Greater(t, time.Until(leaf.NotAfter), 9*365*24*time.Hour)
	fi, err := os.Stat(filepath.Join(dir, tlscert.AutoKeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, 1, rec.count(slog.LevelInfo), "made, and said so")

	restarted, err := tlscert.New(tlscert.Config{Auto: true, Dir: dir, Logger: slog.New(rec)})
	require.NoError(t, err)
	assert.Equal(t, fp, restarted.Fingerprint(), "the same certificate after a restart")
	assert.Equal(t, 1, rec.count(slog.LevelInfo), "nothing made")

	addr, frames := serveTLS(t, restarted)
	pinned, err := tls.Dial("tcp", addr.String(), &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // verified by its fingerprint below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if tlscert.FingerprintOf(raw[0]) != fp {
				return errors.New("fingerprint mismatch")
			}
			return nil
		},
	})
	require.NoError(t, err)
	defer pinned.Close()
	send(t, pinned, frames, "<13>pinned")

	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	for _, name := range []string{"localhost", "127.0.0.1"} {
		c, err := tls.Dial("tcp", addr.String(), &tls.Config{RootCAs: roots, ServerName: name})
		require.NoError(t, err, name)
		send(t, c, frames, "<13>verified as "+name)
		c.Close()
	}
}

func containsIP(ips []net.IP, s string) bool {
	want := net.ParseIP(s)
	for _, ip := range ips {
		if ip.Equal(want) {
			return true
		}
	}
	return false
}

// An expired certificate in Auto's directory is replaced at start, and
// the new fingerprint logged.
func TestAutoReplacesExpired(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "old"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	put(t, filepath.Join(dir, tlscert.AutoCertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	put(t, filepath.Join(dir, tlscert.AutoKeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))

	rec := &logs{}
	st, err := tlscert.New(tlscert.Config{Auto: true, Dir: dir, Hosts: []string{"relay.example", "192.0.2.1"}, Logger: slog.New(rec)})
	require.NoError(t, err)
	assert.NotEqual(t, tlscert.FingerprintOf(der), st.Fingerprint())
	assert.True(t, st.Leaf().NotAfter.After(time.Now()))
	assert.Equal(t, []string{"relay.example"}, st.Leaf().DNSNames)
	assert.Equal(t, "relay.example", st.Leaf().Subject.CommonName)
	assert.True(t, containsIP(st.Leaf().IPAddresses, "192.0.2.1"))
	assert.Equal(t, 1, rec.count(slog.LevelWarn))
}

// Auto refuses files it cannot read rather than replacing them (senders
// may have pinned the certificate).
func TestAutoUnreadable(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, tlscert.AutoCertFile), []byte("not PEM"))
	put(t, filepath.Join(dir, tlscert.AutoKeyFile), []byte("not PEM"))
	_, err := tlscert.New(tlscert.Config{Auto: true, Dir: dir})
	require.Error(t, err)
	b, err := os.ReadFile(filepath.Join(dir, tlscert.AutoCertFile))
	require.NoError(t, err)
	assert.Equal(t, "not PEM", string(b), "left as it was")
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  tlscert.Config
	}{
		{"nothing", tlscert.Config{}},
		{"cert without key", tlscert.Config{CertFile: "c.pem"}},
		{"auto without dir", tlscert.Config{Auto: true}},
		{"auto and files", tlscert.Config{Auto: true, Dir: "d", CertFile: "c.pem", KeyFile: "k.pem"}},
		{"negative validity", tlscert.Config{Auto: true, Dir: "d", Validity: -time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlscert.New(tc.cfg)
			assert.ErrorIs(t, err, tlscert.ErrInvalidConfig)
		})
	}
	_, err := tlscert.New(tlscert.Config{CertFile: filepath.Join(t.TempDir(), "missing.pem"), KeyFile: "missing.key"})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = tlscert.Generate(nil, time.Hour)
	assert.ErrorIs(t, err, tlscert.ErrInvalidConfig)
	_, _, err = tlscert.Generate([]string{"x"}, 0)
	assert.ErrorIs(t, err, tlscert.ErrInvalidConfig)
}

func TestFingerprintString(t *testing.T) {
	var f tlscert.Fingerprint
	for i := range f {
		f[i] = byte(i * 9)
	}
	assert.Equal(t, "00:09:12:1B:24:2D:36:3F:48:51:5A:63:6C:75:7E:87:90:99:A2:AB:B4:BD:C6:CF:D8:E1:EA:F3:FC:05:0E:17", f.String())
}

// TLSConfig keeps the base's settings and takes its certificate from the
// Store.
func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	st, err := tlscert.New(tlscert.Config{Auto: true, Dir: dir, Hosts: []string{"localhost"}})
	require.NoError(t, err)
	base := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}, Certificates: []tls.Certificate{{}}}
	c := st.TLSConfig(base)
	assert.Equal(t, uint16(tls.VersionTLS13), c.MinVersion)
	assert.Equal(t, []string{"h2"}, c.NextProtos)
	assert.Empty(t, c.Certificates)
	assert.Len(t, base.Certificates, 1, "the base is not changed")
	cert, err := c.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	assert.Equal(t, st.Fingerprint(), tlscert.FingerprintOf(cert.Certificate[0]))
}
