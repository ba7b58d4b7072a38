package forward_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/internal/testtool"
)

// bodyLog is an http.RoundTripper that records the bodies of the requests
// to paths containing path, and the statuses they got.
type bodyLog struct {
	path string

	mu       sync.Mutex
	bodies   [][]byte
	statuses []int
}

func (l *bodyLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.Contains(req.URL.Path, l.path) || req.Body == nil {
		return http.DefaultTransport.RoundTrip(req)
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(b))
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		l.mu.Lock()
		l.bodies = append(l.bodies, b)
		l.statuses = append(l.statuses, resp.StatusCode)
		l.mu.Unlock()
	}
	return resp, err
}

func (l *bodyLog) take() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bodies
	l.bodies, l.statuses = nil, nil
	return b
}

// encodingSinks are the sinks that encode ahead, each in front of its own
// stand-in, with their request bodies logged: name -> sink, the log, and
// the messages the stand-in took.
type encodingSink struct {
	name     string
	sink     relaykit.RequestSink
	log      *bodyLog
	messages func() []string
}

func encodingSinks(t *testing.T) []encodingSink {
	t.Helper()
	var out []encodingSink
	for _, table := range []forward.SentinelTable{forward.SentinelCustom, forward.SentinelSyslog, forward.SentinelCommonSecurityLog} {
		dcr := forwardtest.DCRServerConfig{Stream: table.Stream()}
		srv := forwardtest.NewDCRServer(t, dcr)
		log := &bodyLog{path: "/dataCollectionRules/"}
		s := sentinelFor(t, srv, nil, func(c *forward.SentinelConfig) {
			c.Table = table
			if table != forward.SentinelCustom {
				c.Columns, c.Fields = forward.SentinelColumns{}, nil
			}
			c.HTTP.HTTPClient = &http.Client{Transport: log}
		})
		col := map[forward.SentinelTable]string{forward.SentinelCustom: "RawData", forward.SentinelSyslog: "SyslogMessage", forward.SentinelCommonSecurityLog: "Message"}[table]
		out = append(out, encodingSink{"sentinel " + table.String(), s, log, func() []string {
			var m []string
			for _, row := range srv.Rows() {
				m = append(m, row[col].(string))
			}
			return m
		}})
	}
	for _, ep := range []forward.HECEndpoint{forward.HECEvent, forward.HECRaw} {
		srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
		log := &bodyLog{path: "/services/collector/"}
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), Endpoint: ep, DisableHealthCheck: true,
			HTTP: forward.HTTPConfig{HTTPClient: &http.Client{Transport: log}, MaxRequestBytes: 64 << 10}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close() })
		out = append(out, encodingSink{map[forward.HECEndpoint]string{forward.HECEvent: "hec event", forward.HECRaw: "hec raw"}[ep], h, log, srv.Messages})
	}
	return out
}

// TestSendRequestsSendsWhatSendSends: the requests EncodeRequests makes
// are the bodies Send would send, byte for byte, and SendRequests delivers
// them as they are: the destination gets the same rows, in the same order.
func TestSendRequestsSendsWhatSendSends(t *testing.T) {
	for _, es := range encodingSinks(t) {
		t.Run(es.name, func(t *testing.T) {
			batch := make([]relaykit.Event, 600)
			for i := range batch {
				batch[i] = sentinelEvent(i, 300)
			}
			require.NoError(t, es.sink.Send(t.Context(), batch))
			sent := es.log.take()
			msgs := es.messages()
			require.Len(t, msgs, 600)

			reqs, err := es.sink.EncodeRequests(nil, batch)
			require.NoError(t, err)
			require.Len(t, reqs, len(sent), "the same split")
			n := 0
			for i := range reqs {
				n += reqs[i].Events
				assert.Positive(t, reqs[i].OldestReceive+1, "receive range set")
				assert.True(t, strings.HasSuffix(reqs[i].Format, "+gzip"), reqs[i].Format)
			}
			assert.Equal(t, 600, n)
			require.NoError(t, es.sink.SendRequests(t.Context(), reqs))
			again := es.log.take()
			slices.SortFunc(sent, bytes.Compare)
			slices.SortFunc(again, bytes.Compare)
			assert.Equal(t, sent, again, "byte for byte")
			assert.ElementsMatch(t, msgs, es.messages()[600:], "the same rows")
		})
	}
}

// TestCutAndDecodeRequest: CutRequest keeps the events' encodings byte for
// byte, and DecodeRequest recovers each event's message, host and time.
func TestCutAndDecodeRequest(t *testing.T) {
	for _, es := range encodingSinks(t) {
		t.Run(es.name, func(t *testing.T) {
			batch := make([]relaykit.Event, 40)
			for i := range batch {
				batch[i] = sentinelEvent(i, 0)
				batch[i].ReceiveTime = batch[i].Time + 1
			}
			reqs, err := es.sink.EncodeRequests(nil, batch)
			require.NoError(t, err)
			require.Len(t, reqs, 1)
			r := &reqs[0]
			all, err := es.sink.DecodeRequest(nil, r)
			require.NoError(t, err)
			require.Len(t, all, 40)
			for i := range all {
				raw := string(all[i].Raw)
				if strings.Contains(es.name, "CommonSecurityLog") {
					// No message column for CEF: the row is the message.
					assert.Contains(t, raw, "event "+fmt.Sprint(i)+":")
				} else {
					assert.Equal(t, string(batch[i].Raw), raw, "event %d", i)
				}
				if es.name != "hec raw" { // raw: the line only
					assert.Equal(t, string(batch[i].Host), string(all[i].Host), "event %d", i)
					assert.Equal(t, batch[i].Time/int64(time.Millisecond), all[i].Time/int64(time.Millisecond), "event %d", i)
				}
			}
			cut, err := es.sink.CutRequest(r, 10, 25)
			require.NoError(t, err)
			assert.Equal(t, 15, cut.Events)
			assert.Equal(t, r.Format, cut.Format)
			part, err := es.sink.DecodeRequest(nil, &cut)
			require.NoError(t, err)
			require.Len(t, part, 15)
			for i := range part {
				assert.Equal(t, string(all[10+i].Raw), string(part[i].Raw))
			}
			require.NoError(t, es.sink.SendRequests(t.Context(), []relaykit.Request{cut}))
			got := es.messages()
			require.Len(t, got, 15)
			for i, m := range got {
				assert.Contains(t, m, fmt.Sprintf("event %d:", 10+i))
			}
			_, err = es.sink.CutRequest(r, 5, 41)
			assert.Error(t, err)
			bad := *r
			bad.Body = append([]byte(nil), r.Body...)
			bad.Body[len(bad.Body)/2] ^= 0xff
			_, err = es.sink.DecodeRequest(nil, &bad)
			assert.Error(t, err, "a damaged body")
		})
	}
}

// TestSendRequestsPositions: failures of requests sent together are
// reported by position through all of them; HEC's partial accept of a
// stored request sends the rest on, and a 413 splits a stored request.
func TestSendRequestsPositions(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), DisableHealthCheck: true,
		HTTP: forward.HTTPConfig{Concurrency: 1}})
	require.NoError(t, err)
	defer h.Close()
	var reqs []relaykit.Request
	for b := range 3 {
		reqs, err = h.EncodeRequests(reqs, batchOf(fmt.Sprintf("b%d-0", b), fmt.Sprintf("b%d-1", b), fmt.Sprintf("b%d-2", b), fmt.Sprintf("b%d-3", b)))
		require.NoError(t, err)
	}
	require.Len(t, reqs, 3)
	srv.RejectEvent(1) // the first request: its event 1
	srv.TooLarge(1)    // the second: split in halves
	err = h.SendRequests(t.Context(), reqs)
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, relaykit.FailedRange{From: 1, To: 2, Permanent: true, Reason: relaykit.ReasonRejected, Err: be.Failed[0].Err}, be.Failed[0])
	assert.ElementsMatch(t, []string{"b0-0", "b0-2", "b0-3", "b1-0", "b1-1", "b1-2", "b1-3", "b2-0", "b2-1", "b2-2", "b2-3"}, srv.Messages())
	assert.Equal(t, int64(1), h.Stats().Splits)
}

// TestSendRequestsOtherFormat: a stored request of the other HEC endpoint
// (the configuration changed) is decoded and sent as this sink's events;
// one of a format no forward sink knows fails permanently.
func TestSendRequestsOtherFormat(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	ev, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), DisableHealthCheck: true})
	require.NoError(t, err)
	defer ev.Close()
	log := &bodyLog{path: "/services/collector/raw"}
	raw, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), Endpoint: forward.HECRaw, DisableHealthCheck: true,
		HTTP: forward.HTTPConfig{HTTPClient: &http.Client{Transport: log}}})
	require.NoError(t, err)
	defer raw.Close()
	reqs, err := ev.EncodeRequests(nil, batchOf("one", "two"))
	require.NoError(t, err)
	require.NoError(t, raw.SendRequests(t.Context(), reqs))
	assert.Equal(t, []string{"one", "two"}, srv.Messages())
	assert.Len(t, log.take(), 1, "sent to the raw endpoint")

	err = raw.SendRequests(t.Context(), []relaykit.Request{{Format: "otlp.proto+gzip", Events: 3, Body: []byte("x")}})
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Permanent())
	assert.Equal(t, 3, be.Events())
}

// TestSentinelCallLimit: however the rows compress, no call exceeds
// 1,000,000 bytes uncompressed or as sent, and the stand-in, which
// refuses larger calls as the service does, refuses none; requests are
// filled close to the limit.
func TestSentinelCallLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level int
		gzip  bool
	}{
		{"level 1", 1, true},
		{"huffman only", forward.GzipHuffmanOnly, true},
		{"no gzip", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{DiscardRows: true})
			s := sentinelFor(t, srv, nil, func(c *forward.SentinelConfig) {
				c.HTTP.GzipLevel, c.HTTP.DisableGzip = tc.level, !tc.gzip
			})
			batch := make([]relaykit.Event, 3000)
			for i := range batch {
				batch[i] = sentinelEvent(i, 0)
				// Random hex: hardly compressible.
				var b [600]byte
				_, _ = rand.Read(b[:])
				batch[i].Raw = append(batch[i].Raw, hex.EncodeToString(b[:])...)
			}
			require.NoError(t, s.Send(t.Context(), batch))
			reqs, err := s.EncodeRequests(nil, batch)
			require.NoError(t, err)
			require.NoError(t, s.SendRequests(t.Context(), reqs))
			rows := 0
			for i, r := range srv.Requests() {
				assert.Equal(t, http.StatusNoContent, r.Status, "request %d", i)
				assert.LessOrEqual(t, r.BodyBytes, 1_000_000)
				assert.LessOrEqual(t, r.WireBytes, 1_000_000)
				rows += r.Rows
			}
			assert.Equal(t, 6000, rows)
			for _, r := range reqs {
				assert.LessOrEqual(t, len(r.Body), 1_000_000)
			}
		})
	}
}

// TestSentinelAuxiliarySpan: for an Auxiliary-plan table, rows whose
// TimeGenerated (device timestamps, here out of order over two hours) span
// more than the service takes in one call are split into calls of less
// than 30 minutes each, by Send and by EncodeRequests alike; the stand-in,
// which refuses wider calls as the service does, takes them all.
func TestSentinelAuxiliarySpan(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Plan: forwardtest.PlanAuxiliary})
	s := sentinelFor(t, srv, nil, func(c *forward.SentinelConfig) {
		c.Plan = forward.SentinelAuxiliary
		c.Columns = forward.SentinelColumns{}
		c.Fields = nil
	})
	batch := make([]relaykit.Event, 500)
	for i := range batch {
		batch[i] = sentinelEvent(i, 0)
		// Two hours, in a zigzag: every 20th event jumps back an hour.
		batch[i].Time = sentinelBase.Add(time.Duration(i)*14*time.Second - time.Duration(i%20/19)*time.Hour).UnixNano()
	}
	require.NoError(t, s.Send(t.Context(), batch))
	reqs, err := s.EncodeRequests(nil, batch)
	require.NoError(t, err)
	assert.Greater(t, len(reqs), 4)
	require.NoError(t, s.SendRequests(t.Context(), reqs))
	rows := 0
	for _, r := range srv.Requests() {
		assert.Equal(t, http.StatusNoContent, r.Status)
		rows += r.Rows
	}
	assert.Equal(t, 1000, rows)
	rs := srv.Rows()
	require.Len(t, rs, 1000)
	for i := range 500 {
		assert.Equal(t, string(batch[i].Raw), rs[i]["RawData"], "Send keeps the order (Concurrency 1)")
	}

}

// TestSentinelCompressedLimit: a request whose compressed body is over the
// limit (here lowered to 30,000 bytes, with requests of up to 50,000 bytes
// of random base64, which Huffman coding shrinks by a quarter at most) is
// split before it is sent, by EncodeRequests and by Send.
func TestSentinelCompressedLimit(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{DiscardRows: true})
	s := sentinelFor(t, srv, nil, func(c *forward.SentinelConfig) {
		c.HTTP.GzipLevel = forward.GzipHuffmanOnly
		c.HTTP.MaxRequestBytes = 50_000
	})
	forward.SetMaxWire(s, 30_000)
	batch := make([]relaykit.Event, 400)
	for i := range batch {
		batch[i] = sentinelEvent(i, 0)
		var b [300]byte
		_, _ = rand.Read(b[:])
		batch[i].Raw = base64.StdEncoding.AppendEncode(batch[i].Raw, b[:])
	}
	reqs, err := s.EncodeRequests(nil, batch)
	require.NoError(t, err)
	for _, r := range reqs {
		assert.LessOrEqual(t, len(r.Body), 30_000)
	}
	require.NoError(t, s.SendRequests(t.Context(), reqs))
	require.NoError(t, s.Send(t.Context(), batch))
	rows := 0
	for _, r := range srv.Requests() {
		assert.Equal(t, http.StatusNoContent, r.Status)
		assert.LessOrEqual(t, r.WireBytes, 30_000)
		rows += r.Rows
	}
	assert.Equal(t, 800, rows)
	assert.Positive(t, s.Stats().Splits)
}

// TestEncodeRequestsAllocs: encoding a batch ahead allocates at most the
// call's own state once the caller's requests and the sink's pools are
// warm, for every sink that encodes ahead: never per event. (The least of
// three measurements: a garbage collection empties the pools now and
// then, and their refill is not the encoder's per-call cost.)
func TestEncodeRequestsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	batch := make([]relaykit.Event, 500)
	for i := range batch {
		batch[i] = sentinelEvent(i, 300)
	}
	for _, es := range encodingSinks(t) {
		var reqs []relaykit.Request
		for range 5 {
			var err error
			reqs, err = es.sink.EncodeRequests(reqs[:0], batch)
			require.NoError(t, err)
		}
		allocs := testtool.MinAllocsPerRun(3, 20, func() { reqs, _ = es.sink.EncodeRequests(reqs[:0], batch) })
		assert.LessOrEqual(t, allocs, 2.0, "%s: allocations per batch of 500 events", es.name)
	}
	sl, err := forward.NewSyslog(forward.SyslogConfig{Address: "127.0.0.1:1", Hostname: "h"})
	require.NoError(t, err)
	var reqs []relaykit.Request
	reqs, _ = sl.EncodeRequests(reqs[:0], batch)
	allocs := testtool.MinAllocsPerRun(3, 20, func() { reqs, _ = sl.EncodeRequests(reqs[:0], batch) })
	assert.LessOrEqual(t, allocs, 2.0, "syslog: allocations per batch of 500 events")
}
