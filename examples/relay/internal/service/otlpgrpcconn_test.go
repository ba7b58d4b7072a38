package service

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/otlp"
)

const otlpExportPath = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

// otlpGRPCClient is a real gRPC client (grpc-go, plogotlp) of addr whose
// connections come from the local address src.
func otlpGRPCClient(t *testing.T, addr, src string) (*grpc.ClientConn, plogotlp.GRPCClient) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
			return d.DialContext(ctx, "tcp", a)
		}))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn, plogotlp.NewGRPCClient(conn)
}

// grpcExportAndArchived exports one record over gRPC and returns how long
// until it was answered OK; an answer means archived, which it checks.
func grpcExportAndArchived(t *testing.T, tr *testRelay, client plogotlp.GRPCClient, body string) time.Duration {
	t.Helper()
	before := tr.Ledger().Dest["archive"].Delivered
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+testOTLPToken), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := client.Export(ctx, plogotlp.NewExportRequestFromLogs(otlpLogs(body, "dev", 1)))
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, before+1, tr.Ledger().Dest["archive"].Delivered, "answered once archived")
	return took
}

// rawExport opens a raw HTTP/2 connection from src, sends an Export's
// headers (with the token) on stream 1, and returns it and its TCP
// connection with the export message (records "<body> <i>") still to
// send.
func rawExport(t *testing.T, addr, src, body string, records int) (*testtool.H2, net.Conn, []byte) {
	t.Helper()
	c := dialFrom(t, src, addr)
	h, err := testtool.NewH2(c)
	require.NoError(t, err)
	require.NoError(t, h.Headers(1, otlpExportPath, "authorization", "Bearer "+testOTLPToken))
	b, err := plogotlp.NewExportRequestFromLogs(otlpLogs(body, "dev", records)).MarshalProto()
	require.NoError(t, err)
	return h, c, testtool.GRPCMessage(b)
}

// TestOTLPGRPCIdleConnectionsFromOneSource: 200 TCP connections from one
// host to the OTLP/gRPC listener that never speak (the shipped defaults:
// max_connections 1024, 64 per source, header_timeout 10s, idle_timeout
// 2m, body_timeout 30s) cannot lock anyone else out: beyond 64 they are
// refused and counted, and a real gRPC client from another address
// exports (and so archives) within 2 s.
func TestOTLPGRPCIdleConnectionsFromOneSource(t *testing.T) {
	needFiles(t, 2*200+200)
	cfg := otlpConfig(t)
	tr := startRelay(t, cfg)
	in := cfg.Inputs.OTLP[0]
	require.Equal(t, 1024, in.MaxConnections, "the shipped default")
	require.Equal(t, 64, in.MaxConnectionsPerSource, "the shipped default")
	require.Equal(t, 10*time.Second, in.HeaderTimeout, "the shipped default")
	require.Equal(t, 2*time.Minute, in.IdleTimeout, "the shipped default")
	require.Equal(t, 30*time.Second, in.BodyTimeout, "the shipped default")
	ln := inputsOf[*input.OTLPInput](tr.Relay)[0].GRPCListener
	silent := make([]net.Conn, 0, 200)
	for range 200 {
		silent = append(silent, dialFrom(t, "127.0.0.2", tr.addr("otlp/grpc")))
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { s := ln.Stats(); return s.Accepted+s.RefusedPerSource == 200 }, "200 connections accepted or refused")
	s := ln.Stats()
	assert.Equal(t, int64(64), s.Open)
	assert.Equal(t, int64(200-64), s.RefusedPerSource)
	assert.Zero(t, s.Evicted)

	_, client := otlpGRPCClient(t, tr.addr("otlp/grpc"), "127.0.0.1")
	assert.Less(t, grpcExportAndArchived(t, tr, client, "from another host"), 2*time.Second)
	assert.Less(t, grpcExportAndArchived(t, tr, client, "again"), 2*time.Second)
	assert.Equal(t, int64(65), ln.Stats().Open, "the 64 silent ones and the client's")
	// A graceful stop waits for connections in their preface (up to
	// header_timeout): these senders go away first.
	for _, c := range silent {
		c.Close()
	}
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(2), st.Input["otlp"])
}

// TestOTLPGRPCConnDeadlines, with header_timeout 2s and idle_timeout 3s
// (shipped: 10s and 2m): a connection that never sends the HTTP/2
// preface is closed at the header deadline, and a real gRPC client
// connected without a call is sent GOAWAY and disconnected after the
// idle timeout (grpc-go's graceful close adds at most a few seconds); the
// client exports again afterwards on a new connection.
func TestOTLPGRPCConnDeadlines(t *testing.T) {
	t.Parallel() // mostly waits: overlaps with the other waiting tests
	const headerTimeout, idleTimeout = 2 * time.Second, 3 * time.Second
	cfg := otlpConfig(t)
	cfg.Inputs.OTLP[0].HeaderTimeout = headerTimeout
	cfg.Inputs.OTLP[0].IdleTimeout = idleTimeout
	tr := startRelay(t, cfg)
	addr := tr.addr("otlp/grpc")
	ln := inputsOf[*input.OTLPInput](tr.Relay)[0].GRPCListener

	start := time.Now() // before the dial: the relay's deadline may start before it returns
	silent := dialFrom(t, "127.0.0.3", addr)
	require.NoError(t, silent.SetReadDeadline(time.Now().Add(headerTimeout+10*time.Second)))
	_, err := io.ReadAll(silent)
	took := time.Since(start)
	require.NoError(t, err, "closed by the relay, not by the read deadline")
	assert.GreaterOrEqual(t, took, headerTimeout-100*time.Millisecond)
	relaytest.WaitFor(t, 5*time.Second, func() bool { return ln.Stats().Open == 0 }, "the silent connection's slot given back")

	conn, client := otlpGRPCClient(t, addr, "127.0.0.4")
	start = time.Now() // before the connection: the relay's idle clock starts before the client sees it ready
	conn.Connect()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		require.True(t, conn.WaitForStateChange(ctx, s), "connected")
	}
	require.Equal(t, int64(1), ln.Stats().Open)
	ctx, cancel = context.WithTimeout(t.Context(), idleTimeout+15*time.Second)
	defer cancel()
	require.True(t, conn.WaitForStateChange(ctx, connectivity.Ready), "the idle connection closed by the relay")
	took = time.Since(start)
	assert.GreaterOrEqual(t, took, idleTimeout-100*time.Millisecond)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return ln.Stats().Open == 0 }, "the idle connection's slot given back")

	grpcExportAndArchived(t, tr, client, "after the idle close")
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(1), st.Input["otlp"])
}

// TestOTLPGRPCStalledExports, with body_timeout 2s (shipped: 30s): a
// sender that cuts its connection in the middle of an Export's message,
// one that sends an Export's headers and half its message and stalls,
// and one that trickles its message a byte every 100 ms. The stalled and
// the trickling Exports are answered DEADLINE_EXCEEDED after the body
// timeout and counted as body_timeout (the cut one, whose deadline
// passed first, is not: nothing waits for it); none of their records is
// taken in or counted as a request. Meanwhile a real gRPC client's
// exports are answered and archived at once.
func TestOTLPGRPCStalledExports(t *testing.T) {
	t.Parallel() // mostly waits: overlaps with the other waiting tests
	const bodyTimeout = 2 * time.Second
	cfg := otlpConfig(t)
	cfg.Inputs.OTLP[0].BodyTimeout = bodyTimeout
	tr := startRelay(t, cfg)
	addr := tr.addr("otlp/grpc")
	ln := inputsOf[*input.OTLPInput](tr.Relay)[0].GRPCListener

	cut, cutConn, msg := rawExport(t, addr, "127.0.0.5", "cut", 50)
	require.NoError(t, cut.Data(1, msg[:len(msg)/2], false))
	end, err := cut.Wait(1, time.Now().Add(100*time.Millisecond)) // settings exchanged, stream in flight
	require.ErrorIs(t, err, testtool.ErrH2Timeout)
	assert.Equal(t, uint32(otlp.DefaultGRPCMaxStreams), end.MaxStreams, "the relay's SETTINGS bound the streams per connection")

	// Each clock starts before the Export's headers are sent: the relay's
	// body deadline may start before the send returns.
	start := time.Now()
	stalled, _, msg := rawExport(t, addr, "127.0.0.6", "stalled", 50)
	require.NoError(t, stalled.Data(1, msg[:len(msg)/2], false))
	tstart := time.Now()
	trickler, _, tmsg := rawExport(t, addr, "127.0.0.7", "trickled", 50)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := range len(tmsg) - 1 { // never the last byte
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if trickler.Data(1, tmsg[i:i+1], false) != nil {
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	// The cut sender goes away mid-message.
	require.NoError(t, cutConn.Close())

	_, client := otlpGRPCClient(t, addr, "127.0.0.1")
	for i := range 5 {
		assert.Less(t, grpcExportAndArchived(t, tr, client, "good "+strconv.Itoa(i)), time.Second)
	}

	for _, c := range []struct {
		name  string
		h     *testtool.H2
		start time.Time
	}{{"stalled", stalled, start}, {"trickled", trickler, tstart}} {
		end, err := c.h.Wait(1, time.Now().Add(bodyTimeout+10*time.Second))
		took := time.Since(c.start)
		require.NoError(t, err, c.name)
		assert.Equal(t, "4", end.GRPCStatus, "%s: DEADLINE_EXCEEDED: %+v", c.name, end)
		assert.Zero(t, end.Data, "%s: no response message", c.name)
		assert.GreaterOrEqual(t, took, bodyTimeout-100*time.Millisecond, c.name)
	}
	assert.Equal(t, 2.0, metricValue(t, tr, "relay_otlp_errors_total", "input", "otlp", "reason", "body_timeout"))
	assert.Equal(t, 5.0, metricValue(t, tr, "relay_otlp_requests_total", "input", "otlp", "transport", "grpc"))
	assert.Equal(t, int64(3), ln.Stats().Open, "the stalled, the trickling and the good client's connections")
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(5), st.Input["otlp"], "only the good records")
}

// TestOTLPGRPCShutdownWithSilentConnection: a connection that never sends
// the HTTP/2 preface does not hold up a stop past shutdown_timeout (1s
// here, shipped 15s), though grpc-go's Stop waits for connections in
// their preface: the relay ends their reads first.
func TestOTLPGRPCShutdownWithSilentConnection(t *testing.T) {
	cfg := otlpConfig(t)
	cfg.ShutdownTimeout = time.Second
	tr := startRelay(t, cfg)
	require.Equal(t, 10*time.Second, cfg.Inputs.OTLP[0].HeaderTimeout, "the shipped default")
	dialFrom(t, "127.0.0.3", tr.addr("otlp/grpc"))
	relaytest.WaitFor(t, 5*time.Second, func() bool { return inputsOf[*input.OTLPInput](tr.Relay)[0].GRPCListener.Stats().Open == 1 }, "the silent connection accepted")
	start := time.Now()
	st := tr.stop(t)
	assert.Less(t, time.Since(start), cfg.Inputs.OTLP[0].HeaderTimeout, "stopped at shutdown_timeout, not at header_timeout")
	checkBalanced(t, st)
}
