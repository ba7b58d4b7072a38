package otlp_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/otlp"
)

const exportPath = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

func exportMessage(t *testing.T, n int) []byte {
	t.Helper()
	b, err := plogotlp.NewExportRequestFromLogs(testLogs(n)).MarshalProto()
	require.NoError(t, err)
	return testtool.GRPCMessage(b)
}

func dialH2(t *testing.T, addr string) *testtool.H2 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	h, err := testtool.NewH2(c)
	require.NoError(t, err)
	return h
}

// TestReceiverGRPCBodyTimeout: an Export whose headers and first bytes
// arrive but not the rest of its message is answered DEADLINE_EXCEEDED
// after BodyTimeout, counted once in BodyTimeouts, and nothing of it
// reaches the Sink; a whole Export on the same connection meanwhile is
// answered OK, and a stream the client reset before its message (and
// before the deadline) is not counted.
func TestReceiverGRPCBodyTimeout(t *testing.T) {
	const bodyTimeout = 300 * time.Millisecond
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, BodyTimeout: bodyTimeout})
	require.NoError(t, err)
	h := dialH2(t, serveGRPC(t, r))

	require.NoError(t, h.Headers(1, exportPath)) // given up by its client
	require.NoError(t, h.Reset(1))
	msg := exportMessage(t, 3)
	start := time.Now()
	require.NoError(t, h.Headers(3, exportPath))
	require.NoError(t, h.Data(3, msg[:len(msg)/2], false))
	require.NoError(t, h.Headers(5, exportPath))
	require.NoError(t, h.Data(5, msg, true))

	end, err := h.Wait(5, time.Now().Add(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "0", end.GRPCStatus, "the whole export, beside the stalled one")
	assert.Positive(t, end.Data, "with its response")
	require.Len(t, sink.got(), 3)

	end, err = h.Wait(3, time.Now().Add(5*time.Second))
	require.NoError(t, err)
	took := time.Since(start)
	assert.Equal(t, "4", end.GRPCStatus, "DEADLINE_EXCEEDED: %+v", end)
	assert.GreaterOrEqual(t, took, bodyTimeout, "never cut before the deadline")
	// The rest of the message now changes nothing: the stream is gone.
	require.NoError(t, h.Data(3, msg[len(msg)/2:], true))
	require.NoError(t, h.Headers(7, exportPath))
	require.NoError(t, h.Data(7, msg, true))
	end, err = h.Wait(7, time.Now().Add(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "0", end.GRPCStatus, "the connection serves on")

	s := r.Stats()
	assert.Equal(t, int64(1), s.BodyTimeouts)
	assert.Equal(t, int64(2), s.GRPCRequests)
	assert.Equal(t, int64(6), s.RecordsAccepted)
	assert.Len(t, sink.got(), 6)
}

// TestReceiverGRPCConnDeadlines: a connection that never sends the
// HTTP/2 preface is closed after GRPCHandshakeTimeout, and one that sent
// it but opens no stream is sent GOAWAY and closed after
// GRPCIdleTimeout.
func TestReceiverGRPCConnDeadlines(t *testing.T) {
	const d = 300 * time.Millisecond
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: &collectSink{}, GRPCHandshakeTimeout: d, GRPCIdleTimeout: d})
	require.NoError(t, err)
	addr := serveGRPC(t, r)

	// The clock starts before the dial: the server may accept, and start
	// the handshake deadline, before Dial returns.
	start := time.Now()
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	require.NoError(t, silent.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(silent)
	require.NoError(t, err, "closed by the server, not by the read deadline")
	assert.GreaterOrEqual(t, time.Since(start), d)

	start = time.Now()
	end, err := dialH2(t, addr).Wait(0, time.Now().Add(10*time.Second))
	require.NoError(t, err)
	assert.True(t, end.Closed)
	assert.Positive(t, end.GoAway)
	assert.GreaterOrEqual(t, time.Since(start), d)

	_, err = otlp.NewReceiver(otlp.ReceiverConfig{Sink: &collectSink{}, GRPCHandshakeTimeout: -1})
	require.ErrorIs(t, err, otlp.ErrInvalidConfig)
}
