package forward_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// TestSyslogRequests: the requests a Syslog sink encodes are the bytes
// Send writes, framed alike; sent later they arrive as Send's do; cut and
// decoded, they hold the same messages.
func TestSyslogRequests(t *testing.T) {
	for _, tt := range []struct {
		name    string
		framing forward.SyslogFraming
		format  string
	}{{"octet-counting", forward.SyslogOctetCounting, "syslog.5424.octet"}, {"non-transparent", forward.SyslogNonTransparent, "syslog.5424.lf"}} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			got := make(chan []byte, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					got <- nil
					return
				}
				b, _ := io.ReadAll(c)
				got <- b
			}()
			sink, err := forward.NewSyslog(forward.SyslogConfig{Address: l.Addr().String(), Framing: tt.framing,
				Hostname: "h", MaxMessageSize: 500})
			require.NoError(t, err)
			batch := []relaykit.Event{
				{Raw: []byte("one\ntwo"), ReceiveTime: 5},
				{Raw: []byte(strings.Repeat("z", 1000)), ReceiveTime: 7},
				{Raw: []byte("three"), Host: []byte("web-1"), Source: []byte("app"), ReceiveTime: 6},
			}
			require.NoError(t, sink.Send(t.Context(), batch))
			reqs, err := sink.EncodeRequests(nil, batch)
			require.NoError(t, err)
			require.Len(t, reqs, 1)
			assert.Equal(t, tt.format, reqs[0].Format)
			assert.Equal(t, 3, reqs[0].Events)
			assert.Equal(t, []int64{5, 7}, []int64{reqs[0].OldestReceive, reqs[0].NewestReceive})
			require.NoError(t, sink.SendRequests(t.Context(), reqs))
			cut, err := sink.CutRequest(&reqs[0], 2, 3)
			require.NoError(t, err)
			require.NoError(t, sink.SendRequests(t.Context(), []relaykit.Request{cut}))
			require.NoError(t, sink.Close())
			b := string(<-got)
			once := string(reqs[0].Body)
			assert.Equal(t, once+once+string(cut.Body), b, "Send's bytes, then the stored ones, then the cut")

			evs, err := sink.DecodeRequest(nil, &reqs[0])
			require.NoError(t, err)
			require.Len(t, evs, 3)
			assert.Equal(t, "three", string(evs[2].Raw))
			assert.Equal(t, "web-1", string(evs[2].Host))
			assert.Equal(t, "app", string(evs[2].Source))
			assert.Equal(t, strings.Repeat("z", len(evs[1].Raw)), string(evs[1].Raw))
			assert.Less(t, len(evs[1].Raw), 500, "as sent: truncated")
		})
	}
}

// TestSyslogRequestsUDP: a stored request goes out one datagram a message;
// a request of another framing (the sink's configuration changed) is
// decoded and sent as events.
func TestSyslogRequestsUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	sink, err := forward.NewSyslog(forward.SyslogConfig{Network: "udp", Address: pc.LocalAddr().String(), Hostname: "h", SendBuffer: 1 << 20})
	require.NoError(t, err)
	defer sink.Close()
	stream, err := forward.NewSyslog(forward.SyslogConfig{Address: "127.0.0.1:1", Hostname: "h"})
	require.NoError(t, err)
	defer stream.Close()
	reqs, err := sink.EncodeRequests(nil, []relaykit.Event{{Raw: []byte("a")}, {Raw: []byte("bb")}})
	require.NoError(t, err)
	reqs, err = stream.EncodeRequests(reqs, []relaykit.Event{{Raw: []byte("ccc")}})
	require.NoError(t, err)
	require.NoError(t, sink.SendRequests(t.Context(), reqs))
	buf := make([]byte, 2000)
	var msgs []string
	for range 3 {
		require.NoError(t, pc.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, _, err := pc.ReadFrom(buf)
		require.NoError(t, err)
		msgs = append(msgs, string(buf[:n]))
	}
	assert.Equal(t, []string{"<13>1 - h - - - - a", "<13>1 - h - - - - bb", "<13>1 - h - - - - ccc"}, msgs)
	assert.Equal(t, int64(3), sink.Stats().Events)
}
