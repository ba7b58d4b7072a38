package hec_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/stream/hec"
)

// roundTripEvents are events with every field forward.HEC carries: times
// in whole milliseconds, metadata, a syslog priority and indexed fields.
func roundTripEvents(n int) []relaykit.Event {
	evs := make([]relaykit.Event, n)
	for i := range evs {
		e := &evs[i]
		e.Time = 1700000000000000000 + int64(i)*int64(time.Millisecond)
		e.Host = fmt.Appendf(nil, "host-%d", i%3)
		e.Source = []byte("app")
		e.SourceType = []byte("syslog")
		e.Index = []byte("main")
		e.Raw = fmt.Appendf(nil, `message %d with "quotes", \ and ünïcödé`, i)
		e.SetFieldString("user", fmt.Sprint("u", i))
		e.SetFieldString("src_ip", "192.0.2.7")
		if i%2 == 0 {
			e.SetPriority(4, uint8(i%8)) // auth
		}
	}
	return evs
}

// An Event sent by relaykit's own forward.HEC sink into the handler comes
// out equal, priority included: over plain HTTP and TLS, gzipped, with
// and without indexer acknowledgement (forward.HEC polls the ack
// endpoint).
func TestRoundTripForwardHEC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tls, ack bool
	}{{"plain", false, false}, {"tls+ack", true, true}, {"plain+ack", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, h, rec := newServer(t, hec.Config{Tokens: []hec.Token{{Token: secret, Ack: tc.ack}}}, tc.tls)
			sink, err := forward.NewHEC(forward.HECConfig{
				URL: srv.URL, Token: secret, Ack: tc.ack, AckPollInterval: 10 * time.Millisecond,
				HTTP: forward.HTTPConfig{HTTPClient: srv.Client(), MaxRequestBytes: 8 << 10, Concurrency: 1},
			})
			require.NoError(t, err)
			defer sink.Close()
			in := roundTripEvents(300)
			require.NoError(t, sink.Send(t.Context(), in))
			got := rec.all()
			require.Len(t, got, len(in))
			for i := range in {
				g := got[i]
				assert.NotZero(t, g.ReceiveTime)
				g.ReceiveTime = 0
				assert.Equal(t, in[i], g, "event %d", i)
			}
			st := h.Stats()
			assert.Greater(t, st.Requests, int64(1), "split into several gzipped requests")
			assert.Equal(t, int64(len(in)), st.EventsAccepted)
			assert.Less(t, st.Bytes, st.DecodedBytes, "gzip")
			if tc.ack {
				assert.Equal(t, st.Requests, st.AcksAccepted)
				assert.Zero(t, st.AcksPending, "every id was queried")
			}
			fs := sink.Stats()
			assert.Equal(t, int64(len(in)), fs.EventsSent)
		})
	}
}
