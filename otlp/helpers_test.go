package otlp_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/grpc"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// collectSink records what it accepts and fails while fail is set.
type collectSink struct {
	mu     sync.Mutex
	events []relaykit.Event
	fail   bool
	sends  int
}

func (s *collectSink) Send(_ context.Context, batch []relaykit.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends++
	if s.fail {
		return errors.New("destination down")
	}
	for i := range batch {
		s.events = append(s.events, batch[i].Clone())
	}
	return nil
}

func (s *collectSink) setFail(v bool) {
	s.mu.Lock()
	s.fail = v
	s.mu.Unlock()
}

func (s *collectSink) got() []relaykit.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]relaykit.Event(nil), s.events...)
}

// testLogs returns n records with a body "msg-<i>" and an int attribute.
func testLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "svc")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.Body().SetStr("msg-" + itoa(i))
		lr.Attributes().PutInt("i", int64(i))
	}
	return ld
}

func itoa(i int) string {
	return string(appendInt(nil, i))
}

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// serveGRPC serves r on a gRPC server on 127.0.0.1 and returns its
// address; the server stops when the test ends.
func serveGRPC(t testing.TB, r *otlp.Receiver) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer(r.ServerOptions()...)
	r.RegisterGRPC(s)
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return ln.Addr().String()
}

func listenGRPC(t testing.TB) (net.Listener, *grpc.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln, grpc.NewServer()
}
