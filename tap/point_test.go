package tap_test

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// event returns an event whose raw message is msg, with host, sourcetype
// and a field "n" holding its number.
func event(n int, host, msg string) relaykit.Event {
	var e relaykit.Event
	e.ReceiveTime = int64(1_800_000_000_000_000_000 + n)
	e.Host = []byte(host)
	e.SourceType = []byte("syslog")
	e.Raw = []byte(msg)
	e.SetFieldString("n", strconv.Itoa(n))
	return e
}

// events returns n events: host hA for even numbers, hB for odd; the raw
// message says "error" for multiples of 3 and "ok" otherwise.
func events(n int) []relaykit.Event {
	out := make([]relaykit.Event, n)
	for i := range out {
		host := "hA"
		if i%2 == 1 {
			host = "hB"
		}
		msg := fmt.Sprintf("event %d ok", i)
		if i%3 == 0 {
			msg = fmt.Sprintf("event %d error", i)
		}
		out[i] = event(i, host, msg)
	}
	return out
}

// drain returns the numbers (field "n") of the observations waiting in s,
// without blocking.
func drain(t *testing.T, s *tap.Subscription) []int {
	t.Helper()
	var got []int
	for {
		select {
		case o, ok := <-s.C():
			if !ok {
				return got
			}
			v, found := o.Event.Field("n")
			require.True(t, found)
			n, err := strconv.Atoi(string(v))
			require.NoError(t, err)
			got = append(got, n)
		default:
			return got
		}
	}
}

// publish publishes evs to p in batches of the given sizes, cycling.
func publish(p *tap.Point, evs []relaykit.Event, sizes ...int) {
	for i, k := 0, 0; i < len(evs); k++ {
		n := min(sizes[k%len(sizes)], len(evs)-i)
		p.Publish(evs[i : i+n])
		i += n
	}
}

func TestSubscriberSeesWhatPasses(t *testing.T) {
	const total = 30
	tests := []struct {
		name  string
		cfg   tap.SubscribeConfig
		want  func(i int) bool // which event numbers pass
		match int              // expected Matched
	}{
		{name: "all", want: func(int) bool { return true }, match: total},
		{name: "filter raw", cfg: tap.SubscribeConfig{Filter: "error"}, want: func(i int) bool { return i%3 == 0 }, match: 10},
		{name: "filter raw named", cfg: tap.SubscribeConfig{Filter: `\d+ ok`, Field: "_raw"}, want: func(i int) bool { return i%3 != 0 }, match: 20},
		{name: "filter host", cfg: tap.SubscribeConfig{Filter: "^hB$", Field: "host"}, want: func(i int) bool { return i%2 == 1 }, match: 15},
		{name: "filter extracted field", cfg: tap.SubscribeConfig{Filter: "^1[0-9]$", Field: "n"}, want: func(i int) bool { return i >= 10 && i < 20 }, match: 10},
		{name: "filter missing field", cfg: tap.SubscribeConfig{Filter: "x", Field: "nope"}, want: func(int) bool { return false }, match: 0},
		{name: "filter sourcetype true", cfg: tap.SubscribeConfig{Filter: "true", Field: "sourcetype"}, want: func(int) bool { return true }, match: total},
		{name: "sample 4", cfg: tap.SubscribeConfig{Sample: 4}, want: func(i int) bool { return i%4 == 0 }, match: total},
		{name: "sample 7", cfg: tap.SubscribeConfig{Sample: 7}, want: func(i int) bool { return i%7 == 0 }, match: total},
		{name: "filter and sample", cfg: tap.SubscribeConfig{Filter: "error", Sample: 2}, want: func(i int) bool { return i%6 == 0 }, match: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tap.NewPoint("input:test")
			s, err := p.Subscribe(tt.cfg)
			require.NoError(t, err)
			defer s.Close()
			// Batches of uneven sizes: sampling must count across them.
			publish(p, events(total), 1, 5, 3, 8, 2)
			var want []int
			for i := range total {
				if tt.want(i) {
					want = append(want, i)
				}
			}
			got := drain(t, s)
			assert.Equal(t, want, got)
			st := s.Stats()
			assert.Equal(t, uint64(tt.match), st.Matched)
			assert.Equal(t, uint64(len(want)), st.Delivered)
			assert.Zero(t, st.Dropped)
			assert.Zero(t, st.Limited)
		})
	}
}

func TestSubscriberCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := tap.NewPoint("route:r")
		s, err := p.Subscribe(tap.SubscribeConfig{MaxPerSecond: 5, Sample: 2})
		require.NoError(t, err)
		defer s.Close()
		evs := events(24)
		publish(p, evs[:12], 4)
		assert.Equal(t, []int{0, 2, 4, 6, 8}, drain(t, s))
		time.Sleep(999 * time.Millisecond) // still the same window
		publish(p, evs[12:16], 4)
		assert.Empty(t, drain(t, s))
		time.Sleep(time.Millisecond) // a new window
		publish(p, evs[16:], 3)
		assert.Equal(t, []int{16, 18, 20, 22}, drain(t, s))
		st := s.Stats()
		assert.Equal(t, tap.SubscriptionStats{Matched: 24, Limited: 3, Delivered: 9}, st)
	})
}

func TestObservationsAreCopies(t *testing.T) {
	p := tap.NewPoint("input:copy")
	a, err := p.Subscribe(tap.SubscribeConfig{})
	require.NoError(t, err)
	defer a.Close()
	b, err := p.Subscribe(tap.SubscribeConfig{})
	require.NoError(t, err)
	defer b.Close()

	// The publisher reuses one event, as a parser does.
	batch := make([]relaykit.Event, 1)
	e := &batch[0]
	e.Host = append(e.Host, "first"...)
	e.Raw = append(e.Raw, "message one"...)
	e.SetFieldString("k", "v1")
	p.Publish(batch)
	e.Reset()
	e.Host = append(e.Host, "other"...)
	e.Raw = append(e.Raw, "message TWO"...)
	e.SetFieldString("k", "v2")
	p.Publish(batch)
	e.Raw[0] = 'X' // and scribbles on it after publishing

	oa1, oa2 := <-a.C(), <-a.C()
	ob1 := <-b.C()
	assert.Equal(t, "first", string(oa1.Event.Host))
	assert.Equal(t, "message one", string(oa1.Event.Raw))
	v, _ := oa1.Event.Field("k")
	assert.Equal(t, "v1", string(v))
	assert.Equal(t, "message TWO", string(oa2.Event.Raw))
	v, _ = oa2.Event.Field("k")
	assert.Equal(t, "v2", string(v))

	// One subscriber's copy is not another's.
	oa1.Event.Raw[0] = 'Z'
	oa1.Event.Fields[0].Value[0] = 'Z'
	assert.Equal(t, "message one", string(ob1.Event.Raw))
	v, _ = ob1.Event.Field("k")
	assert.Equal(t, "v1", string(v))
	assert.Equal(t, "input:copy", ob1.Point)
	assert.Equal(t, tap.Outcome{}, ob1.Outcome)
}

func TestStuckSubscriberDoesNotBlock(t *testing.T) {
	const (
		batches   = 2000
		batchSize = 100
		total     = batches * batchSize
		buffer    = 16
	)
	p := tap.NewPoint("input:load")
	stuck, err := p.Subscribe(tap.SubscribeConfig{Buffer: buffer})
	require.NoError(t, err)
	defer stuck.Close()
	stuckFiltered, err := p.Subscribe(tap.SubscribeConfig{Buffer: buffer, Filter: "error"})
	require.NoError(t, err)
	defer stuckFiltered.Close()
	live, err := p.Subscribe(tap.SubscribeConfig{Buffer: total})
	require.NoError(t, err)

	var got []int
	read := make(chan struct{})
	go func() {
		defer close(read)
		for o := range live.C() {
			v, _ := o.Event.Field("n")
			n, _ := strconv.Atoi(string(v))
			got = append(got, n)
		}
	}()

	batch := events(batchSize)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range batches {
			for i := range batch {
				batch[i].SetFieldString("n", strconv.Itoa(b*batchSize+i))
			}
			p.Publish(batch)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Publish blocked behind a subscriber that never reads")
	}
	require.NoError(t, live.Close())
	<-read

	st := stuck.Stats()
	assert.Equal(t, uint64(total), st.Matched)
	assert.Equal(t, uint64(buffer), st.Delivered)
	assert.Equal(t, uint64(total-buffer), st.Dropped)
	assert.Len(t, drain(t, stuck), buffer)

	fst := stuckFiltered.Stats()
	matched := uint64(0)
	for i := range batchSize {
		if i%3 == 0 {
			matched++
		}
	}
	matched *= batches
	assert.Equal(t, matched, fst.Matched)
	assert.Equal(t, uint64(buffer), fst.Delivered)
	assert.Equal(t, matched-buffer, fst.Dropped)

	// The reading subscriber got everything, in order.
	require.Len(t, got, total)
	for i, n := range got {
		if n != i {
			require.Equal(t, i, n, "event %d out of order", i)
		}
	}
	assert.Equal(t, tap.SubscriptionStats{Matched: total, Delivered: total}, live.Stats())

	pst := p.Stats()
	assert.Equal(t, 2, pst.Subscribers)
	assert.Equal(t, uint64(batches), pst.Batches)
	assert.Equal(t, uint64(total), pst.Events)
	assert.Equal(t, st.Dropped+fst.Dropped, pst.Dropped)
	assert.Equal(t, st.Delivered+fst.Delivered+total, pst.Delivered)
}

func TestConcurrentPublishers(t *testing.T) {
	const (
		publishers = 4
		batches    = 500
		batchSize  = 50
		total      = publishers * batches * batchSize
	)
	p := tap.NewPoint("input:many")
	stuck, err := p.Subscribe(tap.SubscribeConfig{Buffer: 8, Sample: 3})
	require.NoError(t, err)
	defer stuck.Close()
	live, err := p.Subscribe(tap.SubscribeConfig{Buffer: total})
	require.NoError(t, err)
	defer live.Close()

	var wg sync.WaitGroup
	for w := range publishers {
		wg.Go(func() {
			batch := events(batchSize)
			for b := range batches {
				for i := range batch {
					batch[i].SetFieldString("n", strconv.Itoa(w*1_000_000+b*batchSize+i))
				}
				p.Publish(batch)
			}
		})
	}
	wg.Wait()

	st := stuck.Stats()
	assert.Equal(t, uint64(total), st.Matched)
	// Exactly 1 in 3 (the first, then every third), across publishers.
	assert.Equal(t, uint64((total+2)/3), st.Delivered+st.Dropped)
	assert.Equal(t, uint64(8), st.Delivered)

	// Each publisher's events arrive in its order.
	last := make([]int, publishers)
	for i := range last {
		last[i] = -1
	}
	got := drain(t, live)
	require.Len(t, got, total)
	for _, n := range got {
		w, seq := n/1_000_000, n%1_000_000
		require.Greater(t, seq, last[w], "publisher %d out of order", w)
		last[w] = seq
	}
}

func TestPublishResult(t *testing.T) {
	p := tap.NewPoint("destination:hec")
	s, err := p.Subscribe(tap.SubscribeConfig{})
	require.NoError(t, err)
	defer s.Close()
	outcomes := func() []tap.Outcome {
		var out []tap.Outcome
		for {
			select {
			case o := <-s.C():
				out = append(out, o.Outcome)
			default:
				return out
			}
		}
	}
	delivered := tap.Outcome{Status: tap.StatusDelivered}
	evs := events(6)

	p.PublishResult(evs, nil)
	assert.Equal(t, []tap.Outcome{delivered, delivered, delivered, delivered, delivered, delivered}, outcomes())

	p.PublishResult(evs[:2], errors.New("connection refused"))
	sinkErr := tap.Outcome{Status: tap.StatusFailed, Reason: relaykit.ReasonSinkError}
	assert.Equal(t, []tap.Outcome{sinkErr, sinkErr}, outcomes())

	be := &relaykit.BatchError{Failed: []relaykit.FailedRange{
		{From: 1, To: 3, Permanent: true, Reason: relaykit.ReasonRejected},
		{From: 4, To: 5, Reason: relaykit.ReasonSinkError, RetryAfter: time.Second},
	}}
	p.PublishResult(evs, fmt.Errorf("forward: send to hec: %w", be))
	rejected := tap.Outcome{Status: tap.StatusFailed, Reason: relaykit.ReasonRejected, Permanent: true}
	assert.Equal(t, []tap.Outcome{delivered, rejected, rejected, delivered, sinkErr, delivered}, outcomes())

	p.PublishOutcome(evs[:1], rejected)
	assert.Equal(t, []tap.Outcome{rejected}, outcomes())

	assert.Equal(t, "delivered", tap.StatusDelivered.String())
	assert.Equal(t, "failed", tap.StatusFailed.String())
	assert.Empty(t, tap.StatusNone.String())
	assert.Equal(t, uint64(4), p.Stats().Batches)
	assert.Equal(t, uint64(15), p.Stats().Events)
}

func TestCloseSemantics(t *testing.T) {
	p := tap.NewPoint("route:x")
	assert.False(t, p.Active())
	s, err := p.Subscribe(tap.SubscribeConfig{})
	require.NoError(t, err)
	assert.True(t, p.Active())
	p.Publish(events(3))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close()) // idempotent
	assert.False(t, p.Active())
	p.Publish(events(3)) // nobody: not counted
	// What was buffered stays readable, then the channel is closed.
	n := 0
	for range s.C() {
		n++
	}
	assert.Equal(t, 3, n)

	s2, err := p.Subscribe(tap.SubscribeConfig{Buffer: 1})
	require.NoError(t, err)
	p.Publish(events(2))
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, ok := <-s2.C()
	assert.True(t, ok)
	_, ok = <-s2.C()
	assert.False(t, ok)
	_, err = p.Subscribe(tap.SubscribeConfig{})
	require.ErrorIs(t, err, tap.ErrClosed)
	p.Publish(events(1))

	st := p.Stats()
	assert.Equal(t, tap.Stats{
		Subscribers:       0,
		Batches:           2,
		Events:            5,
		SubscriptionStats: tap.SubscriptionStats{Matched: 5, Delivered: 4, Dropped: 1},
	}, st)

	var nilPoint *tap.Point
	assert.False(t, nilPoint.Active())
	nilPoint.Publish(events(1))
	nilPoint.PublishResult(events(1), errors.New("x"))
	nilPoint.PublishOutcome(events(1), tap.Outcome{})
}

// TestCloseWhilePublishing closes subscriptions while publishers run: a
// hand-off must never send on a closed channel.
func TestCloseWhilePublishing(t *testing.T) {
	p := tap.NewPoint("input:churn")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			batch := events(20)
			for {
				select {
				case <-stop:
					return
				default:
					p.Publish(batch)
					runtime.Gosched() // leave the closing goroutine a core
				}
			}
		})
	}
	for i := range 300 {
		s, err := p.Subscribe(tap.SubscribeConfig{Buffer: 4, Sample: 1 + i%3})
		require.NoError(t, err)
		if i%2 == 0 {
			<-s.C() // wait for a hand-off to be sure publishers are at it
		}
		require.NoError(t, s.Close())
		for range s.C() {
		}
	}
	close(stop)
	wg.Wait()
	st := p.Stats()
	assert.Zero(t, st.Subscribers)
	assert.Positive(t, st.Delivered)
	assert.LessOrEqual(t, st.Delivered+st.Dropped, st.Matched)
}

func TestSubscribeErrors(t *testing.T) {
	p := tap.NewPoint("input:x")
	_, err := p.Subscribe(tap.SubscribeConfig{Filter: "a("})
	require.ErrorIs(t, err, tap.ErrInvalidConfig)
	assert.Contains(t, err.Error(), `filter "a("`)
	assert.Contains(t, err.Error(), "missing closing )")
	for _, cfg := range []tap.SubscribeConfig{{Sample: -1}, {MaxPerSecond: -1}, {Buffer: -1}} {
		_, err := p.Subscribe(cfg)
		require.ErrorIs(t, err, tap.ErrInvalidConfig)
	}
	assert.Zero(t, p.Stats().Subscribers)
}

func TestRegistry(t *testing.T) {
	var r tap.Registry
	assert.Nil(t, r.Lookup("input:a"))
	a := r.Point("input:a")
	assert.Same(t, a, r.Point("input:a"))
	assert.Same(t, a, r.Lookup("input:a"))
	r.Point("destination:z")
	r.Point("route:m")
	assert.Equal(t, []string{"destination:z", "input:a", "route:m"}, r.Names())
	assert.Equal(t, "input:a", a.Name())

	s, err := a.Subscribe(tap.SubscribeConfig{})
	require.NoError(t, err)
	a.Publish(events(2))
	assert.Equal(t, uint64(2), r.Stats()["input:a"].Delivered)
	assert.True(t, r.Remove("input:a"))
	assert.False(t, r.Remove("input:a"))
	assert.Nil(t, r.Lookup("input:a"))
	n := 0
	for range s.C() { // closed by Remove
		n++
	}
	assert.Equal(t, 2, n)
	assert.NotSame(t, a, r.Point("input:a"))
}

// TestPublishAllocs guards the cost model: no allocation without a
// subscription, nor for events a subscription does not take.
func TestPublishAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	batch := events(64)
	sendErr := &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: 1, Reason: relaykit.ReasonRejected}}}
	p := tap.NewPoint("input:a")
	check := func(name string, f func()) {
		t.Helper()
		assert.Zero(t, testing.AllocsPerRun(200, f), name)
	}
	check("no subscriber: Publish", func() { p.Publish(batch) })
	check("no subscriber: PublishOutcome", func() { p.PublishOutcome(batch, tap.Outcome{Status: tap.StatusDelivered}) })
	check("no subscriber: PublishResult", func() { p.PublishResult(batch, sendErr) })

	stuck, err := p.Subscribe(tap.SubscribeConfig{Buffer: 1})
	require.NoError(t, err)
	p.Publish(batch[:1])
	check("stuck subscriber", func() { p.Publish(batch) })
	stuckFiltered, err := p.Subscribe(tap.SubscribeConfig{Buffer: 1, Filter: "error|nothing"})
	require.NoError(t, err)
	p.Publish(batch[:1])
	check("stuck subscribers, one filtered", func() { p.Publish(batch) })
	require.NoError(t, stuck.Close())
	require.NoError(t, stuckFiltered.Close())

	filtered, err := p.Subscribe(tap.SubscribeConfig{Filter: "matches nothing here"})
	require.NoError(t, err)
	defer filtered.Close()
	check("filtered out", func() { p.Publish(batch) })
	sampled, err := p.Subscribe(tap.SubscribeConfig{Sample: 1 << 30})
	require.NoError(t, err)
	defer sampled.Close()
	p.Publish(batch) // takes the first event
	check("sampled out", func() { p.Publish(batch) })
	assert.Equal(t, uint64(1), sampled.Stats().Delivered)
}
