package service

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream/tlscert"
)

// certPair is a certificate and its key, PEM.
type certPair struct{ cert, key []byte }

func newCertPair(t *testing.T) certPair {
	t.Helper()
	c, k, err := tlscert.Generate([]string{"relay.test", "127.0.0.1"}, 24*time.Hour)
	require.NoError(t, err)
	return certPair{c, k}
}

func (p certPair) fingerprint(t *testing.T) string {
	t.Helper()
	cert, err := tls.X509KeyPair(p.cert, p.key)
	require.NoError(t, err)
	return tlscert.FingerprintOf(cert.Certificate[0]).String()
}

// renameInto writes b to name through a file renamed into place, as
// certbot and Kubernetes replace certificates.
func renameInto(t *testing.T, name string, b []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(name+".new", b, 0o600))
	require.NoError(t, os.Rename(name+".new", name))
}

// servedFingerprint makes a TLS handshake with addr and returns the
// fingerprint of the certificate served, and the connection.
func servedFingerprint(t *testing.T, addr string) (string, *tls.Conn) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // compared by fingerprint
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return tlscert.FingerprintOf(c.ConnectionState().PeerCertificates[0].Raw).String(), c
}

// tlsStatus returns the TLS status of input name.
func tlsStatus(st api.Status, name string) *api.TLSStatus {
	for _, in := range st.Inputs {
		if in.Name == name {
			return in.TLS
		}
	}
	return nil
}

// A syslog TLS input's certificate and key files are replaced on disk
// (renamed into place) while a sender keeps a TLS connection open: the
// next handshake gets the new certificate, the open connection keeps
// sending, and the status and the metrics name the new fingerprint. A
// reload (SIGHUP) that finds a certificate without its key keeps the
// certificate in use and reports the error; the key arriving ends it.
func TestTLSCertificateSwappedOnDisk(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "relay.crt"), filepath.Join(dir, "relay.key")
	first, second, third := newCertPair(t), newCertPair(t), newCertPair(t)
	renameInto(t, certFile, first.cert)
	renameInto(t, keyFile, first.key)
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.SyslogUDP = nil
	cfg.Inputs.SyslogTCP = []config.TCPInputConfig{{Name: "tls", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: certFile, KeyFile: keyFile}}}
	cfg.API.Enabled = true
	tr := startRelay(t, cfg)
	addr, metrics := tr.addr("tls"), "http://"+tr.addr("metrics")+"/metrics"
	archive := relaytest.ArchiveOf(cfg).Dir
	sent := 0
	send := func(c *tls.Conn, msg string) {
		t.Helper()
		_, err := io.WriteString(c, "<13>1 - host app - - - "+msg+"\n")
		require.NoError(t, err)
		sent++
		relaytest.WaitFor(t, 10*time.Second, func() bool { return len(archived(t, archive)) == sent }, msg+" archived")
	}

	fp, open := servedFingerprint(t, addr)
	require.Equal(t, first.fingerprint(t), fp)
	send(open, "before the swap")
	assert.Equal(t, fp, tlsStatus(getStatus(t, tr, ""), "tls").SHA256)

	renameInto(t, keyFile, second.key) // a handshake between the two renames would keep the first pair
	renameInto(t, certFile, second.cert)
	fp2, next := servedFingerprint(t, addr)
	assert.Equal(t, second.fingerprint(t), fp2, "the next handshake gets the new certificate")
	send(open, "open connection after the swap")
	send(next, "new connection after the swap")
	ts := tlsStatus(getStatus(t, tr, ""), "tls")
	assert.Equal(t, fp2, ts.SHA256)
	assert.Equal(t, int64(1), ts.Reloads)
	assert.Empty(t, ts.Error)
	assert.Equal(t, float64(1), scrapeSample(metrics, fmt.Sprintf(`relay_input_tls_certificate_info{input="tls",sha256=%q}`, fp2)))

	// A new certificate without its key: SIGHUP's reload keeps the one
	// in use and says why.
	renameInto(t, certFile, third.cert)
	err := tr.ReloadCertificates()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "input tls")
	fp3, _ := servedFingerprint(t, addr)
	assert.Equal(t, fp2, fp3, "the certificate in use is kept")
	ts = tlsStatus(getStatus(t, tr, ""), "tls")
	assert.Equal(t, fp2, ts.SHA256)
	assert.NotEmpty(t, ts.Error)
	assert.Equal(t, int64(1), ts.ReloadErrors)
	assert.Equal(t, float64(1), scrapeSample(metrics, `relay_input_tls_certificate_reload_failing{input="tls"}`))
	send(open, "open connection after the failed reload")

	// Its key arrives: the next handshake takes the pair.
	renameInto(t, keyFile, third.key)
	fp4, last := servedFingerprint(t, addr)
	assert.Equal(t, third.fingerprint(t), fp4)
	send(last, "after the key arrived")
	send(open, "open connection at the end")
	ts = tlsStatus(getStatus(t, tr, ""), "tls")
	assert.Empty(t, ts.Error)
	assert.Equal(t, int64(2), ts.Reloads)
	assert.Equal(t, float64(0), scrapeSample(metrics, `relay_input_tls_certificate_reload_failing{input="tls"}`))
	checkBalanced(t, tr.stop(t))
}

var certLogLine = regexp.MustCompile(`msg="TLS certificate" input=(\S+) sha256=(\S+)`)

// loggedFingerprints returns the fingerprints the relay logged at start,
// by input.
func loggedFingerprints(log string) map[string]string {
	m := map[string]string{}
	for _, s := range certLogLine.FindAllStringSubmatch(log, -1) {
		m[s[1]] = s[2]
	}
	return m
}

// The relay binary with a RELP input over TLS with auto: true and a
// syslog TLS input on certificate files. The first start makes a
// self-signed certificate in spool.dir/tls and logs its fingerprint,
// which the handshake and /api/status show; a restart serves the same
// one. SIGHUP with a certificate file whose key does not match keeps the
// certificate in use, logs the error and shows it on /api/status; SIGHUP
// with the matching key takes the new pair.
func TestBinaryTLSAutoAndSIGHUP(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "relay.crt"), filepath.Join(dir, "relay.key")
	first, second := newCertPair(t), newCertPair(t)
	renameInto(t, certFile, first.cert)
	renameInto(t, keyFile, first.key)
	conf := fmt.Sprintf(`inputs:
  syslog_udp: []
  syslog_tcp: [{name: files, listen: 127.0.0.1:0, tls: {cert_file: %q, key_file: %q}}]
  relp: [{name: relp, listen: 127.0.0.1:0, tls: {auto: true}}]
destinations:
  archive: {type: archive, dir: %q}
spool: {dir: %q}
dead_letter: {dir: %q}
metrics: {listen: 127.0.0.1:0}
api: {enabled: true}
`, certFile, keyFile, filepath.Join(dir, "archive"), filepath.Join(dir, "spool"), filepath.Join(dir, "deadletter"))
	status := func(br *binaryRelay) api.Status {
		resp, err := http.Get("http://" + br.addrs["metrics"] + "/api/status")
		require.NoError(t, err)
		defer resp.Body.Close()
		var st api.Status
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		return st
	}

	br := startBinary(t, conf)
	logged := loggedFingerprints(br.stderr.String())
	auto, _ := servedFingerprint(t, br.addrs["relp"])
	assert.Equal(t, auto, logged["relp"], "the fingerprint logged is the one served")
	assert.Equal(t, first.fingerprint(t), logged["files"])
	assert.Contains(t, br.stderr.String(), "made a self-signed certificate")
	assert.FileExists(t, filepath.Join(dir, "spool", "tls", tlscert.AutoCertFile))
	st := status(br)
	assert.Equal(t, auto, tlsStatus(st, "relp").SHA256)
	assert.Contains(t, tlsStatus(st, "relp").Names, "127.0.0.1")

	// SIGHUP with a certificate whose key has not arrived.
	require.NoError(t, os.WriteFile(certFile, second.cert, 0o600)) // written in place: the handshakes may find it too
	require.NoError(t, br.cmd.Process.Signal(syscall.SIGHUP))
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		return strings.Contains(br.stderr.String(), "reload of certificates failed")
	}, "the failed reload logged")
	fp, _ := servedFingerprint(t, br.addrs["files"])
	assert.Equal(t, first.fingerprint(t), fp, "the certificate in use is kept")
	assert.NotEmpty(t, tlsStatus(status(br), "files").Error)
	require.NoError(t, os.WriteFile(keyFile, second.key, 0o600))
	require.NoError(t, br.cmd.Process.Signal(syscall.SIGHUP))
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		ts := tlsStatus(status(br), "files")
		return ts.Error == "" && ts.SHA256 == second.fingerprint(t)
	}, "the new pair taken")
	fp, _ = servedFingerprint(t, br.addrs["files"])
	assert.Equal(t, second.fingerprint(t), fp)
	code, _ := br.stop(t)
	require.Equal(t, 0, code)

	// A restart on the same state directory serves the same certificate.
	br = startBinary(t, conf)
	again, _ := servedFingerprint(t, br.addrs["relp"])
	assert.Equal(t, auto, again, "the same self-signed certificate after a restart")
	assert.Equal(t, auto, loggedFingerprints(br.stderr.String())["relp"])
	assert.NotContains(t, br.stderr.String(), "made a self-signed certificate")
	assert.Equal(t, auto, tlsStatus(status(br), "relp").SHA256)
	code, _ = br.stop(t)
	require.Equal(t, 0, code)
}
