package service

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/otlp"
)

// telemetrygenVersion is the telemetrygen .ci/run installs (the newest the
// module proxy serves: v0.165.x are refused).
const telemetrygenVersion = "v0.161.0"

const testOTLPToken = "otlp-s3cret"

// otlpConfig is testConfig with an OTLP input (HTTP and gRPC, token) and a
// second archive, "prod", that a route fills with the records whose
// resource attribute deployment.environment is prod (and only those).
func otlpConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.OTLP = []config.OTLPInputConfig{{Name: "otlp", HTTPListen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", Token: testOTLPToken}}
	cfg.Destinations["prod"] = config.DestinationConfig{Spec: &dest.ArchiveDestination{Dir: filepath.Join(t.TempDir(), "prod"), Format: "json"}}
	cfg.Routes = append([]config.RouteConfig{{Name: "prod", Field: "resource.deployment.environment", Filter: "^prod$", Destinations: []string{"prod"}}}, cfg.Routes...)
	return cfg
}

// otlpLogs is n records of one resource (host.name, service.name,
// deployment.environment env), bodies "<prefix> <i>", with log attributes
// of several types.
func otlpLogs(prefix, env string, n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("host.name", "web-"+env)
	ra.PutStr("service.name", "checkout")
	ra.PutStr("deployment.environment", env)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("otlp-test")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + 1000*int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.Body().SetStr(prefix + " " + strconv.Itoa(i))
		a := lr.Attributes()
		a.PutStr("http.method", "POST")
		a.PutInt("n", int64(i))
		a.PutBool("even", i%2 == 0)
	}
	return ld
}

// postOTLP posts an export request body to the input's /v1/logs and
// returns the status.
func postOTLP(t *testing.T, addr, contentType, token string, body []byte, gz bool) int {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		require.NoError(t, zw.Close())
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/v1/logs", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func protoBody(t *testing.T, ld plog.Logs) []byte {
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)
	return b
}

func jsonBody(t *testing.T, ld plog.Logs) []byte {
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
	require.NoError(t, err)
	return b
}

// TestOTLPInputToArchive: OTLP/HTTP protobuf (gzipped), OTLP/HTTP JSON and
// OTLP/gRPC requests, each answered success, are in the archive with
// every attribute, and the route on a resource attribute took exactly
// the prod records.
func TestOTLPInputToArchive(t *testing.T) {
	tr := startRelay(t, otlpConfig(t))
	httpAddr, grpcAddr := tr.addr("otlp/http"), tr.addr("otlp/grpc")

	require.Equal(t, http.StatusOK, postOTLP(t, httpAddr, "application/x-protobuf", testOTLPToken, protoBody(t, otlpLogs("proto", "prod", 100)), true))
	require.Equal(t, http.StatusOK, postOTLP(t, httpAddr, "application/json", testOTLPToken, jsonBody(t, otlpLogs("json", "dev", 100)), false))

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+testOTLPToken)
	_, err = client.Export(ctx, plogotlp.NewExportRequestFromLogs(otlpLogs("grpc", "prod", 100)))
	require.NoError(t, err)
	// Without the token: UNAUTHENTICATED, nothing taken.
	_, err = client.Export(t.Context(), plogotlp.NewExportRequestFromLogs(otlpLogs("nope", "prod", 5)))
	require.Equal(t, codes.Unauthenticated, status.Code(err))

	// Answered means finished: the archives hold them already.
	cfg := tr.cfg
	all := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	prod := archivedRecords(t, relaytest.SpecOf[*dest.ArchiveDestination](cfg, "prod").Dir)
	require.Len(t, all, 300)
	require.Len(t, prod, 200)
	seen := map[string]bool{}
	for _, r := range all {
		prefix, num, ok := strings.Cut(r.Message, " ")
		require.True(t, ok, r.Message)
		env := map[string]string{"proto": "prod", "json": "dev", "grpc": "prod"}[prefix]
		assert.Equal(t, "web-"+env, r.Host)
		assert.Equal(t, "checkout", r.Source)
		assert.Equal(t, env, r.Fields["resource.deployment.environment"])
		assert.Equal(t, "POST", r.Fields["http.method"])
		assert.Equal(t, num, r.Fields["n"])
		i, _ := strconv.Atoi(num)
		assert.Equal(t, strconv.FormatBool(i%2 == 0), r.Fields["even"])
		assert.Equal(t, "WARN", r.Fields[otlp.FieldSeverityText])
		assert.Equal(t, "otlp-test", r.Fields["scope.name"])
		seen[r.Message] = true
	}
	assert.Len(t, seen, 300)
	for _, r := range prod {
		assert.Equal(t, "prod", r.Fields["resource.deployment.environment"])
	}
	s := tr.stop(t)
	assert.Equal(t, int64(300), s.Input["otlp"])
	checkBalanced(t, s)
}

// TestOTLPInputBadInput: truncated protobuf, invalid JSON, a gzip bomb,
// an oversized body, a wrong content type and a wrong token are each
// answered with their status and take nothing in, while a good sender
// beside them loses nothing.
func TestOTLPInputBadInput(t *testing.T) {
	cfg := otlpConfig(t)
	cfg.Inputs.OTLP[0].MaxBodySize = 256 << 10
	tr := startRelay(t, cfg)
	addr := tr.addr("otlp/http")

	const goodRequests, perRequest = 40, 25
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range goodRequests {
			code := postOTLP(t, addr, "application/x-protobuf", testOTLPToken, protoBody(t, otlpLogs("good"+strconv.Itoa(i), "dev", perRequest)), i%2 == 0)
			assert.Equal(t, http.StatusOK, code)
		}
	})

	good := protoBody(t, otlpLogs("bad", "dev", 10))
	bomb := func() []byte { // 64 MiB of zeros in a few tens of KiB
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = io.Copy(zw, io.LimitReader(zeroReader{}, 64<<20))
		_ = zw.Close()
		return b.Bytes()
	}()
	for _, c := range []struct {
		name, ctype, token string
		body               []byte
		gz                 bool
		want               int
	}{
		{"truncated protobuf", "application/x-protobuf", testOTLPToken, good[:len(good)-7], false, http.StatusBadRequest},
		{"invalid JSON", "application/json", testOTLPToken, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":`), false, http.StatusBadRequest},
		{"oversized body", "application/x-protobuf", testOTLPToken, bytes.Repeat([]byte{0}, 512<<10), false, http.StatusRequestEntityTooLarge},
		{"wrong content type", "text/plain", testOTLPToken, good, false, http.StatusUnsupportedMediaType},
		{"wrong token", "application/x-protobuf", "guess", good, false, http.StatusUnauthorized},
		{"no token", "application/x-protobuf", "", good, false, http.StatusUnauthorized},
	} {
		assert.Equal(t, c.want, postOTLP(t, addr, c.ctype, c.token, c.body, c.gz), c.name)
	}
	// The bomb, already compressed: sent as it is.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/v1/logs", bytes.NewReader(bomb))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+testOTLPToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "gzip bomb")
	wg.Wait()

	recs := archivedRecords(t, relaytest.ArchiveOf(tr.cfg).Dir)
	require.Len(t, recs, goodRequests*perRequest)
	for _, r := range recs {
		assert.True(t, strings.HasPrefix(r.Message, "good"), r.Message)
	}
	var st otlp.ReceiverStats
	for _, o := range inputsOf[*input.OTLPInput](tr.Relay) {
		st = o.Receiver.Stats()
	}
	assert.Equal(t, int64(2), st.TooLarge)
	assert.Equal(t, int64(2), st.BadRequests)
	assert.Equal(t, int64(1), st.BadContentType)
	assert.Equal(t, int64(2), st.Unauthorized)
	s := tr.stop(t)
	assert.Equal(t, int64(goodRequests*perRequest), s.Input["otlp"])
	checkBalanced(t, s)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// downstream is an OTLP receiver standing in for a backend: it keeps
// copies of what it accepted; records over maxEvent bytes it refuses with
// a partial success.
type downstream struct {
	mu     sync.Mutex
	events []relaykit.Event
	recv   *otlp.Receiver
	http   string // host:port
	grpc   string
}

func startDownstream(t *testing.T, maxEvent int) *downstream {
	t.Helper()
	d := &downstream{}
	var err error
	d.recv, err = otlp.NewReceiver(otlp.ReceiverConfig{MaxEventBytes: maxEvent, Sink: sinkFunc(func(_ context.Context, b []relaykit.Event) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		for i := range b {
			d.events = append(d.events, b[i].Clone())
		}
		return nil
	})})
	require.NoError(t, err)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d.http, d.grpc = hl.Addr().String(), gl.Addr().String()
	hs := &http.Server{Handler: d.recv, ReadHeaderTimeout: 5 * time.Second}
	gs := grpc.NewServer(d.recv.ServerOptions()...)
	d.recv.RegisterGRPC(gs)
	var wg sync.WaitGroup
	wg.Go(func() { _ = hs.Serve(hl) })
	wg.Go(func() { _ = gs.Serve(gl) })
	t.Cleanup(func() {
		_ = hs.Close()
		gs.Stop()
		wg.Wait()
	})
	return d
}

func (d *downstream) got() []relaykit.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]relaykit.Event(nil), d.events...)
}

// TestOTLPDestination: syslog in, each OTLP protocol out: every event
// arrives with host, app, priority, procid and message; the records the
// backend refuses with a partial success are dead-lettered, not retried.
func TestOTLPDestination(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "http/json", "grpc"} {
		t.Run(strings.ReplaceAll(proto, "/", "_"), func(t *testing.T) {
			down := startDownstream(t, 600)
			cfg := relaytest.TestConfig(t)
			addr := down.http
			if proto == "grpc" {
				addr = down.grpc
			}
			cfg.Destinations["otel"] = config.DestinationConfig{Spec: &dest.OTLPDestination{Endpoint: "http://" + addr, Protocol: proto}}
			cfg.Routes = []config.RouteConfig{{Name: "all", Destinations: []string{"archive", "otel"}}}
			tr := startRelay(t, cfg)

			const n, big = 200, 3
			var b bytes.Buffer
			for i := range n {
				fmt.Fprintf(&b, "<38>1 2024-05-01T10:00:00Z fw1 sshd %d ID47 - Accepted publickey for user%d\n", 1000+i, i)
			}
			for i := range big { // over the backend's 600 bytes: refused with a partial success
				fmt.Fprintf(&b, "<38>1 2024-05-01T10:00:00Z fw1 sshd 9 ID47 - big%d %s\n", i, strings.Repeat("x", 1000))
			}
			relaytest.Send(t, "tcp", tr.addr("tcp"), b.Bytes())

			relaytest.WaitFor(t, 20*time.Second, func() bool {
				s := tr.Ledger()
				return s.Dest["otel"].Delivered+s.Dest["otel"].Dropped == n+big
			}, "the otlp destination to finish")
			s := tr.stop(t)
			got := down.got()
			require.Len(t, got, n)
			for i, e := range got {
				assert.Equal(t, "fw1", string(e.Host))
				assert.Equal(t, "sshd", string(e.Source))
				assert.Equal(t, 38, int(e.Priority))
				procid, _ := e.Field("procid")
				assert.Equal(t, strconv.Itoa(1000+i), string(procid))
				assert.Equal(t, fmt.Sprintf("Accepted publickey for user%d", i), string(e.Raw))
			}
			assert.Equal(t, int64(big), s.Dest["otel"].Dropped)
			assert.Equal(t, int64(big), s.Dropped[relaykit.ReasonRejected])
			dl := archived(t, tr.cfg.DeadLetter.Dir)
			require.Len(t, dl, big)
			for _, l := range dl {
				assert.Contains(t, l, "destination:otel")
				assert.Contains(t, l, "big")
			}
			assert.Equal(t, int64(big), down.recv.Stats().RecordsRejected, "sent once, not retried")
			checkBalanced(t, s)
		})
	}
}

// TestOTLPConfig: the OTLP input and destination sections as YAML, their
// defaults and their errors.
func TestOTLPConfig(t *testing.T) {
	var cfg config.Config
	require.NoError(t, yaml.Unmarshal([]byte(`
inputs:
  otlp:
    - name: otel
      http_listen: 127.0.0.1:4318
      grpc_listen: 127.0.0.1:4317
      token: abc
destinations:
  backend:
    type: otlp
    endpoint: https://otel.example:4317
    protocol: grpc
    headers: {x-api-key: k}
    gzip: false
    max_request_size: 1MiB
routes:
  - name: all
    destinations: [backend]
`), &cfg))
	require.NoError(t, cfg.Validate())
	in := cfg.Inputs.OTLP[0]
	assert.Equal(t, "spec", in.Names)
	assert.Equal(t, config.ByteSize(otlp.DefaultMaxBodyBytes), in.MaxBodySize)
	assert.Equal(t, 1024, in.MaxConnections)
	d := cfg.Destinations["backend"].Spec.(*dest.OTLPDestination)
	assert.Equal(t, "grpc", d.Protocol)
	assert.Equal(t, config.ByteSize(1<<20), d.MaxRequestSize)
	assert.NotContains(t, cfg.Summary(), "abc")
	assert.NotContains(t, d.Summary(), ": k")

	bad := func(yml string, want ...string) {
		t.Helper()
		var c config.Config
		require.NoError(t, yaml.Unmarshal([]byte(yml), &c))
		err := c.Validate()
		require.Error(t, err)
		for _, w := range want {
			assert.Contains(t, err.Error(), w)
		}
	}
	bad("inputs: {otlp: [{name: o}]}", "inputs.otlp[0]: http_listen or grpc_listen")
	bad("inputs: {otlp: [{name: o, http_listen: x, names: bsd}]}", "inputs.otlp[0].http_listen", "inputs.otlp[0].names")
	bad(`destinations: {b: {type: otlp, endpoint: "otel:4317", protocol: udp}}`, "destinations.b.endpoint", "destinations.b.protocol")
	bad(`destinations: {b: {type: otlp, endpoint: "http://otel:4318", ca_file: x, cert_file: y}}`, "destinations.b.ca_file: is set, but", "cert_file and key_file go together")
	bad(`destinations: {b: {type: otlp, endpoint: "http://otel:4318", concurrency: 3}}`, "destinations.b.concurrency")
}

// TestOTLPTelemetrygen: the OpenTelemetry Collector's load generator,
// telemetrygen, sends N logs to the relay's OTLP/gRPC and OTLP/HTTP
// inputs (with the bearer token, resource and log attributes); the
// archive holds all N of each with their attributes.
func TestOTLPTelemetrygen(t *testing.T) {
	bin := testtool.Need(t, "telemetrygen", "go install github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@"+telemetrygenVersion,
		os.Getenv("RELAYKIT_TELEMETRYGEN"))
	tr := startRelay(t, otlpConfig(t))
	const n = 1000
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"grpc", []string{"--otlp-endpoint", tr.addr("otlp/grpc")}},
		{"http", []string{"--otlp-endpoint", tr.addr("otlp/http"), "--otlp-http"}},
	} {
		args := append([]string{"logs", "--otlp-insecure", "--logs", strconv.Itoa(n), "--rate", "0",
			"--otlp-header", `Authorization="Bearer ` + testOTLPToken + `"`,
			"--otlp-attributes", `deployment.environment="tg-` + tc.name + `"`,
			"--telemetry-attributes", `sender="telemetrygen"`,
			"--body", "telemetrygen " + tc.name}, tc.args...)
		out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
		require.NoError(t, err, "telemetrygen %s: %s", tc.name, out)
	}
	tr.stop(t)
	count := map[string]int{}
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(tr.cfg).Dir) {
		env := r.Fields["resource.deployment.environment"]
		assert.Equal(t, "telemetrygen "+strings.TrimPrefix(env, "tg-"), r.Message)
		assert.Equal(t, "telemetrygen", r.Fields["sender"])
		count[env]++
	}
	assert.Equal(t, map[string]int{"tg-grpc": n, "tg-http": n}, count)
}

// clientCert writes a self-signed client certificate (and its key) for
// mutual TLS; the certificate is its own CA.
func clientCert(t *testing.T) (certFile, keyFile string, cert tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "otlp sender"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	cpem := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kpem := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	require.NoError(t, os.WriteFile(certFile, cpem, 0o600))
	require.NoError(t, os.WriteFile(keyFile, kpem, 0o600))
	cert, err = tls.X509KeyPair(cpem, kpem)
	require.NoError(t, err)
	return certFile, keyFile, cert
}

// TestOTLPInputMutualTLS: with tls and client_ca_file, both listeners
// take senders that present a client certificate (gRPC over TLS with ALPN
// h2, HTTPS) and refuse the handshake of one that does not; no token is
// needed. The input has its tap point.
func TestOTLPInputMutualTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	ccFile, _, ccert := clientCert(t)
	cfg := otlpConfig(t)
	cfg.Inputs.OTLP[0].Token = ""
	cfg.Inputs.OTLP[0].TLS = &config.TLSConfig{CertFile: certFile, KeyFile: keyFile, ClientCAFile: ccFile}
	tr := startRelay(t, cfg)
	assert.Contains(t, tr.taps.Names(), "input:otlp")

	pemBytes, err := os.ReadFile(certFile)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(pemBytes))
	withCert := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{ccert}, MinVersion: tls.VersionTLS12}
	noCert := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}

	conn, err := grpc.NewClient(tr.addr("otlp/grpc"), grpc.WithTransportCredentials(credentials.NewTLS(withCert)))
	require.NoError(t, err)
	defer conn.Close()
	_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), plogotlp.NewExportRequestFromLogs(otlpLogs("grpc", "prod", 10)))
	require.NoError(t, err)

	post := func(tc *tls.Config) (int, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		defer c.CloseIdleConnections()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+tr.addr("otlp/http")+"/v1/logs",
			bytes.NewReader(protoBody(t, otlpLogs("https", "dev", 10))))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	code, err := post(withCert)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	_, err = post(noCert)
	require.Error(t, err, "a sender without a client certificate")

	s := tr.stop(t)
	assert.Equal(t, int64(20), s.Input["otlp"])
	assert.Len(t, archivedRecords(t, relaytest.ArchiveOf(tr.cfg).Dir), 20)
}
