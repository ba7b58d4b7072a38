package otlp_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"

	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/streamhttp"
)

// proxyDial dials addr and writes a version 2 PROXY header naming src,
// as a load balancer does on each connection it opens.
func proxyDial(ctx context.Context, addr string, src *net.TCPAddr) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := proxyproto.HeaderProxyFromAddrs(2, src, c.RemoteAddr()).WriteTo(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func proxyListener(t *testing.T) *stream.Listener {
	t.Helper()
	ln, err := stream.New(stream.Config{
		Name: "otlp", Address: "127.0.0.1:0", ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	require.NoError(t, err)
	return ln
}

// Behind a load balancer that sends PROXY headers, the receiver's HTTP
// and gRPC servers on stream listeners with ProxyProtocol see the sender
// the header named: as the HTTP request's RemoteAddr and as the gRPC
// call's peer.
func TestReceiverBehindProxy(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []string
	note := func(a string) {
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
	}

	httpLn := proxyListener(t)
	nl := httpLn.NetListener()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			note("http " + req.RemoteAddr)
			r.ServeHTTP(w, req)
		}),
		ConnState:         streamhttp.ConnState(nl),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(nl) }()
	defer func() {
		require.NoError(t, srv.Shutdown(context.Background()))
		assert.ErrorIs(t, <-served, http.ErrServerClosed)
	}()

	grpcLn := proxyListener(t)
	gs := grpc.NewServer(append(r.ServerOptions(), grpc.UnaryInterceptor(
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if p, ok := peer.FromContext(ctx); ok {
				note("grpc " + p.Addr.String())
			}
			return h(ctx, req)
		}))...)
	r.RegisterGRPC(gs)
	grpcDone := make(chan struct{})
	go func() { _ = gs.Serve(grpcLn.NetListener()); close(grpcDone) }()
	defer func() { gs.Stop(); <-grpcDone }()

	sender := &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 40001}
	body, err := plogotlp.NewExportRequestFromLogs(testLogs(2)).MarshalProto()
	require.NoError(t, err)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return proxyDial(ctx, addr, sender) }}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post("http://"+nl.Addr().String()+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	conn, err := grpc.NewClient(grpcLn.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return proxyDial(ctx, addr, sender) }))
	require.NoError(t, err)
	defer conn.Close()
	_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), plogotlp.NewExportRequestFromLogs(testLogs(3)))
	require.NoError(t, err)

	mu.Lock()
	assert.Equal(t, []string{"http 203.0.113.7:40001", "grpc 203.0.113.7:40001"}, seen)
	mu.Unlock()
	assert.Len(t, sink.got(), 5)
	assert.Equal(t, int64(1), httpLn.Stats().ProxyHeaders)
	assert.Equal(t, int64(1), grpcLn.Stats().ProxyHeaders)
}
