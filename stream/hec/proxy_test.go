package hec_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/hec"
	"github.com/relaykit/relaykit/stream/streamhttp"
)

// Behind a load balancer that sends PROXY headers, a Handler served on a
// stream listener with ProxyProtocol sees the sender the header named as
// the request's RemoteAddr (hec.Request.RemoteAddr in the Sink).
func TestHandlerBehindProxy(t *testing.T) {
	var mu sync.Mutex
	var addrs []string
	h, err := hec.New(hec.Config{
		Tokens: []hec.Token{{Name: "apps", Token: secret}},
		Sink: relaykit.SinkFunc(func(ctx context.Context, _ []relaykit.Event) error {
			req, _ := hec.FromContext(ctx)
			mu.Lock()
			addrs = append(addrs, req.RemoteAddr)
			mu.Unlock()
			return nil
		}),
	})
	require.NoError(t, err)
	defer h.Close()
	ln, err := stream.New(stream.Config{
		Name: "hec", Address: "127.0.0.1:0", ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	require.NoError(t, err)
	nl := ln.NetListener()
	srv := &http.Server{Handler: h, ConnState: streamhttp.ConnState(nl), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(nl) }()
	defer func() {
		require.NoError(t, srv.Shutdown(context.Background()))
		assert.ErrorIs(t, <-served, http.ErrServerClosed)
	}()

	// The balancer: each connection it opens starts with a version 2
	// header naming the sender.
	sender := &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 40001}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if _, err := proxyproto.HeaderProxyFromAddrs(2, sender, &net.TCPAddr{IP: net.ParseIP("198.51.100.1"), Port: 8088}).WriteTo(c); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range 2 {
		req, err := http.NewRequest(http.MethodPost, "http://"+nl.Addr().String()+"/services/collector/event", strings.NewReader(`{"event":"hello"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Splunk "+secret)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	mu.Lock()
	assert.Equal(t, []string{"203.0.113.7:40001", "203.0.113.7:40001"}, addrs)
	mu.Unlock()
	assert.Equal(t, int64(1), ln.Stats().ProxyHeaders, "one kept-alive connection")
}
