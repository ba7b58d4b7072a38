package service

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/relaykit/relaykit"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type testRelay struct {
	*Relay
	cancel context.CancelFunc
	done   chan error
	final  *ledger.Snapshot
}

func startRelay(t *testing.T, cfg config.Config) *testRelay {
	t.Helper()
	require.NoError(t, cfg.Validate())
	r, err := NewRelay(cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testRelay{Relay: r, cancel: cancel, done: make(chan error, 1)}
	go func() { tr.done <- r.Run(ctx) }()
	t.Cleanup(func() { tr.stop(t) })
	relaytest.WaitFor(t, 5*time.Second, func() bool { return r.healthy() == nil }, "relay ready")
	return tr
}

// stop shuts the relay down (once) and returns the final ledger.
func (tr *testRelay) stop(t *testing.T) ledger.Snapshot {
	t.Helper()
	if tr.final == nil {
		tr.cancel()
		select {
		case err := <-tr.done:
			require.NoError(t, err)
		case <-time.After(60 * time.Second):
			t.Fatal("relay did not stop")
		}
		s := tr.Ledger()
		tr.final = &s
	}
	return *tr.final
}

func (tr *testRelay) addr(name string) string { return tr.Addrs()[name].String() }

func (tr *testRelay) port(name string) string {
	_, p, _ := net.SplitHostPort(tr.addr(name))
	return p
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// archived reads every line of every file in dir (gzip-compressed too).
func archived(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.HasSuffix(f, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			data, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// archiveRecord is one line of a JSON archive (storage.AppendJSON).
type archiveRecord struct {
	Time       string            `json:"time"`
	Host       string            `json:"host"`
	Source     string            `json:"source"`
	SourceType string            `json:"sourcetype"`
	Message    string            `json:"message"`
	Fields     map[string]string `json:"fields"`
}

func archivedRecords(t *testing.T, dir string) []archiveRecord {
	t.Helper()
	var out []archiveRecord
	for _, l := range archived(t, dir) {
		var r archiveRecord
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		out = append(out, r)
	}
	return out
}

// runTool runs a client to completion with a deadline and returns its
// combined output.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, relaytest.NeedTool(t, name), args...).CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
	return string(out)
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "relay test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

// checkBalanced asserts the ledger balances stage by stage once the relay
// has stopped (nothing queued or in flight).
func checkBalanced(t *testing.T, s ledger.Snapshot) {
	t.Helper()
	require.Zero(t, s.Queued, "queued after shutdown: %s", s)
	var drops int64 // before routing
	for r, n := range s.Dropped {
		if r == ledger.DropQueueFull || r == ledger.DropInvalidJSON || r == ledger.DropRcvbuf || r == ledger.DropUnqueued || r == ledger.DropRateLimit {
			drops += n
		}
	}
	require.Equal(t, s.Received, s.Routed+drops, "received = routed + dropped before routing: %s", s)
	var in int64 // handed to destinations
	for name, d := range s.Dest {
		require.Zero(t, d.Unaccounted(), "destination %s: in+recovered = delivered+dropped+pending: %+v", name, d)
		in += d.In
	}
	// The route table: what it took and made = what it handed on, dropped
	// or absorbed into summaries.
	require.Equal(t, s.Routed+s.Copies+s.ProducedTotal(),
		in+s.Dropped[ledger.DropUnrouted]+s.Dropped[ledger.DropFiltered]+s.ReducedTotal(),
		"routed + copies + produced = handed to destinations + dropped{unrouted, filtered} + reduced: %s (copies %d)", s, s.Copies)
}

// execCommand runs a client to completion with a deadline.
func execCommand(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// sinkFunc adapts a function to relaykit.Sink.
type sinkFunc func(ctx context.Context, batch []relaykit.Event) error

func (f sinkFunc) Send(ctx context.Context, batch []relaykit.Event) error { return f(ctx, batch) }

// inputsOf returns the relay's inputs of type T, in config order (the
// syslog TCP/TLS inputs, then the JSON ones, for *streamInput).
func inputsOf[T input.Input](r *Relay) []T {
	var out []T
	for _, in := range r.inputs {
		if t, ok := in.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
