package hec_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/stream/hec"
)

// gate is a Sink that blocks each Send until the test releases it with an
// outcome, proving that nothing is acknowledged before Send returns.
type gate struct {
	entered chan int // events of the batch
	release chan error
	rec     recorder
}

func newGate() *gate { return &gate{entered: make(chan int, 16), release: make(chan error)} }

func (g *gate) Send(ctx context.Context, batch []relaykit.Event) error {
	g.entered <- len(batch)
	select {
	case err := <-g.release:
		if err != nil {
			return err
		}
		return g.rec.Send(ctx, batch)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func queryAcks(t *testing.T, client *http.Client, base string, ids ...int64) map[string]bool {
	t.Helper()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	rep := do(t, client, base, req{path: "/services/collector/ack", auth: "Splunk " + secret, channel: channel,
		body: []byte(`{"acks":[` + strings.Join(parts, ",") + `]}`)})
	require.Equal(t, 200, rep.status, rep.raw)
	return rep.Acks
}

// With indexer acknowledgement an ackId answers true only after the
// Sink's Send returned nil, and is forgotten once reported true; an id
// whose Send failed stays false.
func TestAckOnlyAfterSend(t *testing.T) {
	g := newGate()
	srv, h, _ := newServer(t, hec.Config{Sink: g, Tokens: []hec.Token{{Token: secret, Ack: true}}}, false)
	auth := "Splunk " + secret

	rep := do(t, srv.Client(), srv.URL, req{auth: auth, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, hec.CodeChannelMissing, code(t, rep))

	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}{"event":"b"}`)})
	require.Equal(t, 0, code(t, rep), rep.raw)
	require.NotNil(t, rep.AckID)
	assert.Equal(t, int64(0), *rep.AckID)
	assert.Equal(t, 2, <-g.entered)

	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"c"}`)})
	require.Equal(t, 0, code(t, rep), rep.raw)
	require.Equal(t, int64(1), *rep.AckID)
	assert.Equal(t, 1, <-g.entered)

	// Both Sends are blocked: nothing is acknowledged.
	assert.Equal(t, map[string]bool{"0": false, "1": false, "7": false}, queryAcks(t, srv.Client(), srv.URL, 0, 1, 7))
	assert.Equal(t, int64(2), h.Stats().AcksPending)

	g.release <- nil                     // one Send accepts
	g.release <- errors.New("disk full") // the other refuses
	require.Eventually(t, func() bool {
		st := h.Stats()
		return st.AcksAccepted+st.AcksFailed == 2
	}, 5*time.Second, time.Millisecond)
	acks := queryAcks(t, srv.Client(), srv.URL, 0, 1)
	assert.Equal(t, 1, countTrue(acks), "exactly the accepted batch is acknowledged: %v", acks)
	assert.Equal(t, map[string]bool{"0": false, "1": false}, queryAcks(t, srv.Client(), srv.URL, 0, 1), "forgotten once reported")
	st := h.Stats()
	assert.Zero(t, st.AcksPending)
	assert.Equal(t, int64(1), st.AcksAccepted)
	assert.Equal(t, int64(1), st.AcksFailed)
	assert.Equal(t, int64(3), st.Events)
	assert.Equal(t, st.Events, st.EventsAccepted+st.EventsRefused)
	assert.Equal(t, int64(3), st.AckQueries)
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// Ack state is bounded: beyond MaxPendingAcks ids per channel, or
// MaxAckChannels channels, requests are answered server busy; idle
// channels are dropped.
func TestAckLimits(t *testing.T) {
	rec := &recorder{}
	srv, h, _ := newServer(t, hec.Config{Sink: rec, Tokens: []hec.Token{{Token: secret, Ack: true}},
		MaxPendingAcks: 2, MaxAckChannels: 1, AckChannelIdle: time.Hour}, false)
	auth := "Splunk " + secret
	for i := range 2 {
		rep := do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}`)})
		require.Equal(t, 0, code(t, rep))
		require.Equal(t, int64(i), *rep.AckID)
	}
	rep := do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, hec.CodeServerBusy, code(t, rep), "third pending id")
	assert.Equal(t, 503, rep.status)
	other := "1aeeac95-ac74-4aa9-b30d-6c4c0ac581ba"
	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: other, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, hec.CodeServerBusy, code(t, rep), "second channel")

	require.Eventually(t, func() bool { return h.Stats().AcksAccepted == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, map[string]bool{"0": true, "1": true}, queryAcks(t, srv.Client(), srv.URL, 0, 1))
	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, 0, code(t, rep), "room again once the ids were reported")
}

// A body over MaxBodyBytes, as sent or after decompression (a gzip bomb),
// is answered 413 and counted; the bomb is cut at the limit.
func TestBodyLimits(t *testing.T) {
	srv, h, rec := newServer(t, hec.Config{MaxBodyBytes: 64 << 10}, false)
	auth := "Splunk " + secret
	big := []byte(`{"event":"` + strings.Repeat("x", 70<<10) + `"}`)
	rep := do(t, srv.Client(), srv.URL, req{auth: auth, body: big})
	assert.Equal(t, http.StatusRequestEntityTooLarge, rep.status)
	assert.Contains(t, rep.raw, "too large (maximum is 65536)")

	// 100 MiB of zeros compress to about 100 KiB; send 1 GiB worth by
	// concatenating gzip members (a valid stream).
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 8<<20))
	require.NoError(t, zw.Close())
	bomb := bytes.Repeat(member.Bytes(), 2)
	require.Less(t, len(bomb), 64<<10, "the compressed bomb fits the wire limit")
	rep = do(t, srv.Client(), srv.URL, req{auth: auth, encoding: "gzip", body: bomb})
	assert.Equal(t, http.StatusRequestEntityTooLarge, rep.status)

	rep = do(t, srv.Client(), srv.URL, req{auth: auth, body: []byte(`{"event":"fine"}`), gzip: true})
	assert.Equal(t, 0, code(t, rep), "the next request is served")
	st := h.Stats()
	assert.Equal(t, int64(2), st.TooLarge)
	assert.LessOrEqual(t, st.DecodedBytes, int64(1<<10), "no decompressed byte past the limit was kept")
	assert.Len(t, rec.all(), 1)
}

// A sender that trickles its body is answered 408 at BodyTimeout and
// counted, while another sender is served meanwhile.
func TestSlowBody(t *testing.T) {
	srv, h, rec := newServer(t, hec.Config{BodyTimeout: 300 * time.Millisecond}, false)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	body := `{"event":"slow"}`
	// The clock starts before the request is sent: the server may read its
	// headers, and start the body deadline, before the write returns.
	start := time.Now()
	_, err = fmt.Fprintf(c, "POST /services/collector/event HTTP/1.1\r\nHost: x\r\nAuthorization: Splunk %s\r\nContent-Length: %d\r\n\r\n%s",
		secret, len(body)+100, body)
	require.NoError(t, err)

	rep := do(t, srv.Client(), srv.URL, req{auth: "Splunk " + secret, body: []byte(`{"event":"fast"}`)})
	assert.Equal(t, 0, code(t, rep))

	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	status, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, status, "408")
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	assert.Equal(t, int64(1), h.Stats().BodyTimeouts)
	got := rec.all()
	require.Len(t, got, 1)
	assert.Equal(t, "fast", string(got[0].Raw))
}

// Shutdown lets acknowledged Sends finish; Close cancels them and their
// ids stay false.
func TestShutdown(t *testing.T) {
	g := newGate()
	h, err := hec.New(hec.Config{Sink: g, Tokens: []hec.Token{{Token: secret, Ack: true}}})
	require.NoError(t, err)
	srv := newHTTPServer(t, h)
	rep := do(t, srv.Client(), srv.URL, req{auth: "Splunk " + secret, channel: channel, body: []byte(`{"event":"a"}`)})
	require.Equal(t, 0, code(t, rep))
	<-g.entered
	done := make(chan error, 1)
	go func() { done <- h.Shutdown(t.Context()) }()
	g.release <- nil
	require.NoError(t, <-done)
	assert.Equal(t, int64(1), h.Stats().AcksAccepted)

	h2, err := hec.New(hec.Config{Sink: g, Tokens: []hec.Token{{Token: secret, Ack: true}}})
	require.NoError(t, err)
	srv2 := newHTTPServer(t, h2)
	rep = do(t, srv2.Client(), srv2.URL, req{auth: "Splunk " + secret, channel: channel, body: []byte(`{"event":"a"}`)})
	require.Equal(t, 0, code(t, rep))
	<-g.entered
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, h2.Shutdown(ctx), context.DeadlineExceeded)
	st := h2.Stats()
	assert.Equal(t, int64(1), st.AcksFailed)
	assert.Equal(t, int64(1), st.EventsRefused)
}

// A channel idle for AckChannelIdle is dropped: its ids answer false and
// are counted as expired. The handler's clock moves past the idle time.
// (With a clock that stood still, as the relay once had, channels never
// expired.)
func TestAckChannelIdle(t *testing.T) {
	clk := clock.NewFake(time.Now())
	srv, h, _ := newServer(t, hec.Config{Tokens: []hec.Token{{Token: secret, Ack: true}}, AckChannelIdle: time.Minute, Clock: clk}, false)
	auth := "Splunk " + secret
	rep := do(t, srv.Client(), srv.URL, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}`)})
	require.Equal(t, 0, code(t, rep))
	require.Eventually(t, func() bool { return h.Stats().AcksAccepted == 1 }, 5*time.Second, time.Millisecond)
	other := "2aeeac95-ac74-4aa9-b30d-6c4c0ac581ba"
	clk.Add(59 * time.Second)
	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: other, body: []byte(`{"event":"b"}`)})
	require.Equal(t, 0, code(t, rep))
	assert.Zero(t, h.Stats().AcksExpired, "idle for 59 s of 60")
	// A request on another channel sweeps the state once the first is idle
	// (sweeps come at most every quarter of AckChannelIdle).
	clk.Add(16 * time.Second)
	rep = do(t, srv.Client(), srv.URL, req{auth: auth, channel: other, body: []byte(`{"event":"c"}`)})
	require.Equal(t, 0, code(t, rep))
	assert.EqualValues(t, 1, h.Stats().AcksExpired)
	assert.Equal(t, map[string]bool{"0": false}, queryAcks(t, srv.Client(), srv.URL, 0))
}

// Each request's events carry the handler clock's time when the request
// was decoded: two requests a few seconds apart differ by as much.
func TestReceiveTimeFromClock(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	srv, _, rec := newServer(t, hec.Config{Clock: clk}, false)
	auth := "Splunk " + secret
	for _, path := range []string{"", "/services/collector/raw"} {
		rep := do(t, srv.Client(), srv.URL+path, req{auth: auth, channel: channel, body: []byte(`{"event":"a"}`)})
		require.Equal(t, 0, code(t, rep))
		clk.Add(2 * time.Second)
	}
	evs := rec.all()
	require.Len(t, evs, 2)
	assert.Equal(t, t0.UnixNano(), evs[0].ReceiveTime)
	assert.Equal(t, t0.Add(2*time.Second).UnixNano(), evs[1].ReceiveTime)
}
