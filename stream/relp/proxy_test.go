package relp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
)

// Behind a load balancer that sends PROXY headers, a RELP session on a
// listener with ProxyProtocol is handed a connection whose Source is the
// sender the header named.
func TestRELPBehindProxy(t *testing.T) {
	var mu sync.Mutex
	var sources []string
	sink := &relpSink{}
	srv, err := relp.New(relp.Config{Handler: func(ctx context.Context, c *stream.Conn, batch []relp.Message) error {
		mu.Lock()
		sources = append(sources, c.Source().String()+" "+c.RemoteAddr().String())
		mu.Unlock()
		return sink.handle(ctx, c, batch)
	}})
	require.NoError(t, err)
	ln, err := stream.New(stream.Config{
		Address: "127.0.0.1:0", Handler: srv.ServeConn,
		ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ln.Serve(context.Background()) }()
	defer func() {
		require.NoError(t, srv.Close())
		require.NoError(t, ln.Close())
		require.NoError(t, <-done)
	}()

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "PROXY TCP6 2001:db8::7 2001:db8::1 40001 2514\r\n")
	require.NoError(t, err)
	rc := &relpClient{t: t, c: c, r: bufio.NewReader(c), txnr: 1}
	rc.open()
	txnr := rc.send("syslog", "<13>1 - host app - - - behind a balancer")
	got, cmd, data, err := rc.read()
	require.NoError(t, err)
	assert.Equal(t, txnr, got)
	assert.Equal(t, "rsp", cmd)
	assert.Equal(t, "200 OK", data)
	mu.Lock()
	assert.Equal(t, []string{"2001:db8::7 [2001:db8::7]:40001"}, sources)
	mu.Unlock()
	assert.Equal(t, []string{"<13>1 - host app - - - behind a balancer"}, sink.got())
}
