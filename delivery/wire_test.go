package delivery_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/spool/spooltest"
)

// Tests of the queue in front of the real encoding destinations (Sentinel
// and HEC, through their protocol-faithful stand-ins): batches are stored
// and sent as the requests the destination receives.

// wireDest is a Sentinel or HEC sink in front of its stand-in, reached by
// calling the stand-in's handler (so it runs in a synctest bubble too),
// with the data requests it sent recorded.
type wireDest struct {
	kind string
	sink relaykit.RequestSink
	down func(bool) // refuse every data request (503) or not
	rows func() []string
	cap  *capture
	open func(t testing.TB) // makes sink (again: inside a synctest bubble)
}

// capture records the body and status of each data request.
type capture struct {
	inner http.RoundTripper
	data  func(*http.Request) bool

	mu       sync.Mutex
	bodies   [][]byte
	statuses []int
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	if !c.data(req) || req.Body == nil {
		return c.inner.RoundTrip(req)
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(b))
	resp, err := c.inner.RoundTrip(req)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.statuses = append(c.statuses, status)
	c.mu.Unlock()
	return resp, err
}

// accepted returns the bodies of the data requests the destination
// accepted, in order, and their bytes in all.
func (c *capture) accepted() ([][]byte, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	n := 0
	for i, b := range c.bodies {
		if c.statuses[i] >= 200 && c.statuses[i] < 300 {
			out = append(out, b)
			n += len(b)
		}
	}
	return out, n
}

var wireKinds = []string{"sentinel", "hec"}

// newWireDest starts the stand-in of kind (outside any synctest bubble)
// and returns the destination with its sink; in a bubble, call it
// outside and open the sink inside with reopen.
func newWireDest(t testing.TB, kind string, dcr forwardtest.DCRServerConfig) *wireDest {
	t.Helper()
	d := &wireDest{kind: kind}
	switch kind {
	case "sentinel":
		srv := forwardtest.NewDCRServer(t, dcr)
		d.cap = &capture{inner: handlerTransport{srv.Handler()}, data: func(r *http.Request) bool {
			return strings.Contains(r.URL.Path, "/dataCollectionRules/")
		}}
		d.open = func(t testing.TB) {
			client := &http.Client{Transport: d.cap}
			c := srv.Config()
			ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: c.TenantID, ClientID: c.ClientID,
				ClientSecret: c.ClientSecret, AuthorityHost: "https://login.invalid", HTTPClient: client})
			require.NoError(t, err)
			plan := forward.SentinelAnalytics
			if dcr.Plan == forwardtest.PlanAuxiliary {
				plan = forward.SentinelAuxiliary
			}
			s, err := forward.NewSentinel(forward.SentinelConfig{Endpoint: "https://dce.invalid", DCRImmutableID: c.DCRImmutableID,
				Stream: c.Stream, TokenSource: ts, Plan: plan, HTTP: forward.HTTPConfig{HTTPClient: client}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			d.sink = s
		}
		d.down = func(down bool) {
			if down {
				srv.Throttle(1000*time.Hour, forwardtest.DCRFault{Status: http.StatusServiceUnavailable})
			} else {
				srv.Throttle(0, forwardtest.DCRFault{})
			}
		}
		d.rows = func() []string {
			var out []string
			for _, row := range srv.Rows() {
				out = append(out, row["RawData"].(string))
			}
			return out
		}
	case "hec":
		srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
		d.cap = &capture{inner: handlerTransport{srv.Handler()}, data: func(r *http.Request) bool {
			return r.URL.Path == "/services/collector/event"
		}}
		d.open = func(t testing.TB) {
			h, err := forward.NewHEC(forward.HECConfig{URL: "http://hec.invalid:8088", Token: srv.Token(),
				HTTP: forward.HTTPConfig{HTTPClient: &http.Client{Transport: d.cap}}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.Close() })
			d.sink = h
		}
		d.down = func(down bool) {
			if down {
				srv.Throttle(1000*time.Hour, forwardtest.HECThrottle{Status: http.StatusServiceUnavailable})
			} else {
				srv.Throttle(0, forwardtest.HECThrottle{})
			}
		}
		d.rows = srv.Messages
	}
	d.open(t)
	return d
}

// seqs returns the sequence numbers of the messages the destination took.
func (d *wireDest) seqs() []int {
	var out []int
	for _, m := range d.rows() {
		s, _, _ := strings.Cut(m, " ")
		n, err := strconv.Atoi(s)
		if err != nil {
			panic(m)
		}
		out = append(out, n)
	}
	return out
}

var wireWords = strings.Fields(`GET POST /api/v1/orders /static/app.js 200 404 503 user=alice user=bob
	session expired token refreshed upstream timeout retrying connection reset by peer kubelet
	pod=web-7f9c node=ip-10-0-3-17 audit type=SYSCALL arch=c000003e syscall=59 success=yes`)

// wireBatch returns n events numbered from first, each a message of about
// size bytes ("<seq> words..."), their times fixed by their number, so
// that the same batch always encodes to the same bytes.
func wireBatch(first, n, size int) []relaykit.Event {
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixNano()
	b := make([]relaykit.Event, n)
	for i := range b {
		seq := first + i
		rng := rand.New(rand.NewPCG(uint64(seq), 7))
		msg := strconv.AppendInt(nil, int64(seq), 10)
		for len(msg) < size {
			msg = append(append(msg, ' '), wireWords[rng.IntN(len(wireWords))]...)
		}
		e := &b[i]
		e.Raw = msg
		e.Host = []byte("host-" + strconv.Itoa(seq%4))
		e.Time = base + int64(seq)*int64(time.Millisecond)
		e.ReceiveTime = e.Time + int64(time.Millisecond)
	}
	return b
}

// TestWireBacklogByteIdentical: a batch sent from the disk backlog (the
// destination was down, the process stopped, a new one sent it) goes out
// in exactly the bytes it goes out in from memory (destination up): the
// requests encoded and compressed once, at Send.
func TestWireBacklogByteIdentical(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			batch := wireBatch(0, 1500, 1200) // more than one request
			// From memory.
			a := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			q := start(t, a.sink, delivery.Config{Name: kind})
			require.NoError(t, q.Send(t.Context(), batch))
			closeQ(t, q, 10*time.Second)
			fromMemory, _ := a.cap.accepted()
			require.GreaterOrEqual(t, len(fromMemory), 2)
			// The requests of a batch are sent concurrently: in any order.
			assert.ElementsMatch(t, seqs(0, 1500), a.seqs())

			// From the disk backlog.
			b := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			dir := t.TempDir()
			b.down(true)
			q, err := delivery.New(b.sink, delivery.Config{Name: kind, Dir: dir})
			require.NoError(t, err)
			run(t, q)
			require.NoError(t, q.Send(t.Context(), batch))
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			require.NoError(t, q.Close(ctx), "the batch is on disk")
			cancel()
			b.down(false)
			q = start(t, b.sink, delivery.Config{Name: kind, Dir: dir})
			assert.Equal(t, int64(1500), q.Stats().Recovered)
			closeQ(t, q, 10*time.Second)
			fromDisk, _ := b.cap.accepted()
			assert.ElementsMatch(t, seqs(0, 1500), b.seqs())
			require.Equal(t, len(fromMemory), len(fromDisk), "requests")
			sortBodies(fromMemory)
			sortBodies(fromDisk)
			for i := range fromMemory {
				assert.True(t, bytes.Equal(fromMemory[i], fromDisk[i]), "request %d: %d bytes from memory, %d from disk", i, len(fromMemory[i]), len(fromDisk[i]))
			}
		})
	}
}

func sortBodies(b [][]byte) { slices.SortFunc(b, bytes.Compare) }

// TestWireOutage: the destination answers 503 for 60 s while 800 events
// a second arrive (batches of 200, every 250 ms), with the shipped
// defaults, in a synctest bubble (the 60 s are the bubble's). Send never
// waits on the clock; everything is delivered once, in order, after the
// destination returns; the ledger balances; and the backlog takes no more
// room on disk than on the wire (at most 1.1 times the bytes per event).
func TestWireOutage(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each in a bubble of its own
			d := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			synctest.Test(t, func(t *testing.T) {
				d.open(t)
				q, err := delivery.New(d.sink, delivery.Config{Name: kind, Dir: t.TempDir()})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- q.Run(ctx) }()
				const size = 200
				n := 0
				var waited time.Duration
				send := func(d time.Duration) {
					for end := time.Now().Add(d); time.Now().Before(end); {
						t0 := time.Now()
						require.NoError(t, q.Send(t.Context(), wireBatch(n, size, 600)))
						waited = max(waited, time.Since(t0))
						n += size
						time.Sleep(250 * time.Millisecond) // the offered rate
					}
				}
				send(10 * time.Second)
				d.down(true)
				before := q.Stats()
				send(60 * time.Second)
				during := q.Stats()
				assert.False(t, during.Healthy)
				d.down(false)
				send(20 * time.Second)
				for q.Stats().Delivered < int64(n) {
					time.Sleep(100 * time.Millisecond)
				}
				require.NoError(t, q.Close(t.Context()))
				cancel()
				require.NoError(t, <-done)

				assertOnce(t, seqs(0, n), d.seqs())
				assert.Zero(t, waited, "Send never waited on the clock")
				st := q.Stats()
				assertLedger(t, st)
				assert.Empty(t, st.Dropped)
				assert.Zero(t, st.Pending)
				_, wire := d.cap.accepted()
				spoolPer := float64(during.Spool.Bytes-before.Spool.Bytes) / float64(during.SpoolEvents-before.SpoolEvents)
				wirePer := float64(wire) / float64(n)
				assert.LessOrEqual(t, spoolPer, 1.1*wirePer, "spool bytes per event against wire bytes per event")
				t.Logf("%d events; backlog %d events in %d bytes (%.0f B/event); wire %.0f B/event",
					n, during.SpoolEvents, during.Spool.Bytes-before.Spool.Bytes, spoolPer, wirePer)
			})
		})
	}
}

// TestWireDiskFull is TestDiskFull with Sentinel and HEC: the spool on a
// real 2 MiB file system, a healthy destination, far more data than fits:
// Sends wait for delivery instead of failing, nothing is dropped.
func TestWireDiskFull(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			dir := testtool.Tmpfs(t, "2m")
			d := newWireDest(t, kind, forwardtest.DCRServerConfig{DiscardRows: false})
			q := start(t, d.sink, delivery.Config{Name: kind, Dir: filepath.Join(dir, "spool")})
			const size = 400
			n := 0
			for range 60 { // 60 × 400 × ~1.2 KB ≈ 29 MB of messages, several MB compressed
				b := wireBatch(n, size, 1200)
				for i := range b {
					// Hard to compress: random hex after the words.
					b[i].Raw = fmt.Appendf(b[i].Raw, " %x", rand.Uint64())
				}
				require.NoError(t, q.Send(t.Context(), b))
				n += size
			}
			closeQ(t, q, 30*time.Second)
			assertOnce(t, seqs(0, n), d.seqs())
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			t.Logf("disk errors %d; spool appended %d batches of %d", st.DiskErrors, st.Spool.Appended, n/size)
		})
	}
}

// TestWireDiskFaults: ENOSPC on every spool write for a while: batches
// are held in memory, encoded, sent from there, and the Sends wait for
// their delivery; the state clears without a restart.
func TestWireDiskFaults(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			fsys := &spooltest.FaultFS{}
			d := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			q := start(t, d.sink, delivery.Config{Name: kind, FS: fsys})
			const size = 50
			n := 0
			send := func(k int) {
				for range k {
					require.NoError(t, q.Send(t.Context(), wireBatch(n, size, 300)))
					n += size
				}
			}
			send(10)
			clear := fsys.Inject(spooltest.Fault{Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.ENOSPC})
			send(30)
			assert.True(t, q.Stats().DiskFailing, "the failure is reported")
			clear()
			send(10)
			closeQ(t, q, 10*time.Second)
			assertOnce(t, seqs(0, n), d.seqs())
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			assert.False(t, st.DiskFailing, "cleared without a restart")
			assert.Positive(t, st.DiskErrors)
		})
	}
}

// TestWireDamagedRecord is TestDamagedSpool with Sentinel and HEC: the
// destination is down, the backlog of requests on disk, the process
// stops, one byte of a record is flipped; after a restart everything but
// that record's events is delivered in order, and those are counted.
func TestWireDamagedRecord(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			d := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			d.down(true)
			q, err := delivery.New(d.sink, delivery.Config{Name: kind, Dir: dir})
			require.NoError(t, err)
			for i := range 20 {
				require.NoError(t, q.Send(t.Context(), wireBatch(i*10, 10, 300)))
			}
			require.NoError(t, q.Close(t.Context()))
			segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
			require.NoError(t, err)
			require.Len(t, segs, 1)
			info, err := os.Stat(segs[0])
			require.NoError(t, err)
			require.NoError(t, spooltest.FlipBit(segs[0], info.Size()/2, 2))

			d.down(false)
			q = start(t, d.sink, delivery.Config{Name: kind, Dir: dir})
			assert.Equal(t, int64(200), q.Stats().Recovered)
			closeQ(t, q, 10*time.Second)
			got := d.seqs()
			st := q.Stats()
			assert.Equal(t, int64(10), st.Dropped[relaykit.ReasonSpoolCorrupt], "one batch lost")
			assert.Len(t, got, 190)
			assertSubsequence(t, seqs(0, 200), got)
			assertLedger(t, st)
		})
	}
}

// TestWireUpgradeFromVersion3: testdata/queue-v3 is the spool directory of
// a Queue written by the release before spool version 4 (relaykit e993e75,
// testdata/genv3): batches of events, 270 of them not delivered. After the
// upgrade a Queue in front of Sentinel (or HEC) delivers every one of them,
// in order, before the batches sent to it since, which it spools as
// requests.
func TestWireUpgradeFromVersion3(t *testing.T) {
	for _, kind := range wireKinds {
		t.Run(kind, func(t *testing.T) {
			dir := copyDir(t, "testdata/queue-v3")
			d := newWireDest(t, kind, forwardtest.DCRServerConfig{})
			q, err := delivery.New(d.sink, delivery.Config{Name: kind, Dir: dir})
			require.NoError(t, err)
			assert.Equal(t, int64(270), q.Stats().Recovered)
			require.NoError(t, q.Send(t.Context(), wireBatch(300, 10, 100)))
			run(t, q)
			closeQ(t, q, 10*time.Second)
			rows := d.rows()
			require.Len(t, rows, 280)
			for i, msg := range rows[:270] {
				seq := 30 + i
				assert.Equal(t, fmt.Sprintf("event %d: user login accepted from 192.0.2.%d", seq, seq%250), msg)
			}
			assertOnce(t, seqs(300, 310), d.seqsOf(rows[270:]))
			st := q.Stats()
			assertLedger(t, st)
			assert.Zero(t, st.Pending)
			assert.Empty(t, st.Dropped)
		})
	}
}

func (d *wireDest) seqsOf(msgs []string) []int {
	var out []int
	for _, m := range msgs {
		s, _, _ := strings.Cut(m, " ")
		n, _ := strconv.Atoi(s)
		out = append(out, n)
	}
	return out
}

// copyDir copies the test data directory src to a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o750)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o640)
	}))
	return dst
}

// TestAuxiliaryBacklogAfter40MinuteOutage: a custom table with the
// Auxiliary plan, whose calls must hold less than 30 minutes of
// TimeGenerated, is unreachable for 40 minutes (of a synctest bubble's
// clock) while events arrive, some of them with device timestamps spread
// over 40 minutes in one batch. When it returns, the backlog is replayed:
// every row arrives once, in order, and no call is refused for its time
// range (the stand-in refuses as the service does).
func TestAuxiliaryBacklogAfter40MinuteOutage(t *testing.T) {
	d := newWireDest(t, "sentinel", forwardtest.DCRServerConfig{Plan: forwardtest.PlanAuxiliary})
	synctest.Test(t, func(t *testing.T) {
		d.open(t)
		q, err := delivery.New(d.sink, delivery.Config{Name: "aux", Dir: t.TempDir()})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- q.Run(ctx) }()
		n := 0
		batch := func(k int) []relaykit.Event {
			b := wireBatch(n, k, 200)
			for i := range b {
				b[i].ReceiveTime, b[i].Time = time.Now().UnixNano(), 0 // TimeGenerated is when it came
			}
			n += k
			return b
		}
		d.down(true)
		for end := time.Now().Add(40 * time.Minute); time.Now().Before(end); {
			require.NoError(t, q.Send(t.Context(), batch(20)))
			time.Sleep(5 * time.Second)
		}
		// A device that buffered 40 minutes sends them at once.
		b := batch(240)
		for i := range b {
			b[i].Time = time.Now().Add(-40*time.Minute + time.Duration(i)*10*time.Second).UnixNano()
		}
		require.NoError(t, q.Send(t.Context(), b))
		assert.Positive(t, q.Stats().SpoolEvents)
		d.down(false)
		for q.Stats().Delivered < int64(n) {
			time.Sleep(time.Second)
		}
		require.NoError(t, q.Close(t.Context()))
		cancel()
		require.NoError(t, <-done)
		// The device's batch took several requests, sent concurrently.
		got := d.seqs()
		require.Len(t, got, n)
		assertOnce(t, seqs(0, n-240), got[:n-240])
		assert.ElementsMatch(t, seqs(n-240, n), got[n-240:])
		st := q.Stats()
		assertLedger(t, st)
		assert.Empty(t, st.Dropped)
		assert.Zero(t, st.DeadLettered)
		d.cap.mu.Lock()
		for i, s := range d.cap.statuses {
			assert.NotEqual(t, http.StatusBadRequest, s, "request %d refused", i)
		}
		d.cap.mu.Unlock()
	})
}
