package sources_test

import (
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// benchClock is a cached clock like the relay's: an atomic read per call.
// The benchmarks do not advance it (a coarse clock changes once per
// millisecond, i.e. once in some 100,000 events).
var benchClock = clock.NewFake(time.Unix(0, 1_700_000_000_000_000_000))

func newBench(b *testing.B, p sources.Policy) *sources.Tracker {
	b.Helper()
	benchClock.Set(time.Unix(0, 1_700_000_000_000_000_000))
	tr, err := sources.New(sources.Config{Clock: benchClock, Policy: p})
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// benchKeys are the senders of the lookup benchmarks: 1,000 known keys
// visited in turn, so each lookup finds its entry in cache only as much as
// a real table of that size allows.
func benchKeys() ([]netip.Addr, [][]byte) {
	const keys = 1000
	addrs := make([]netip.Addr, keys)
	hosts := make([][]byte, keys)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		hosts[i] = []byte("host-" + strconv.Itoa(i) + ".example.net")
	}
	return addrs, hosts
}

// BenchmarkObserve is the per-event cost of tracking a known key on one
// goroutine, with tracking off (a nil *Tracker: what a relay holds when
// sources are off) and on: through a Handle (a stream input keeps one per
// connection), and through a lookup per event by address (UDP: each
// datagram may come from another sender) or by the event's host. One op
// is one event.
func BenchmarkObserve(b *testing.B) {
	addrs, hosts := benchKeys()
	for _, impl := range []string{"off", "on"} {
		tracker := func() *sources.Tracker {
			if impl == "off" {
				return nil
			}
			tr := newBench(b, sources.Policy{})
			for i := range addrs {
				tr.ObserveAddr(addrs[i], 1, 1)
				tr.ObserveHost(hosts[i], 1, 1)
			}
			return tr
		}
		b.Run("path=handle/impl="+impl, func(b *testing.B) {
			h := tracker().Addr(addrs[0])
			b.ReportAllocs()
			for b.Loop() {
				h.Observe(1, 200)
			}
		})
		b.Run("path=addr/impl="+impl, func(b *testing.B) {
			tr := tracker()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tr.ObserveAddr(addrs[i], 1, 200)
				if i++; i == len(addrs) {
					i = 0
				}
			}
		})
		b.Run("path=host/impl="+impl, func(b *testing.B) {
			tr := tracker()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tr.ObserveHost(hosts[i], 1, 200)
				if i++; i == len(hosts) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkObserveParallel is BenchmarkObserve on GOMAXPROCS goroutines
// (RunParallel), each with its own senders as with SO_REUSEPORT (which
// gives one sender's datagrams to one socket): ns/op is wall time per
// event over all goroutines, so with -cpu 2 one event costs a core about
// twice that.
func BenchmarkObserveParallel(b *testing.B) {
	addrs, _ := benchKeys()
	for _, impl := range []string{"off", "on"} {
		tracker := func() *sources.Tracker {
			if impl == "off" {
				return nil
			}
			return newBench(b, sources.Policy{})
		}
		b.Run("path=handle/impl="+impl, func(b *testing.B) {
			tr := tracker()
			var next atomic.Int32
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				h := tr.Addr(addrs[next.Add(1)])
				for pb.Next() {
					h.Observe(1, 200)
				}
			})
		})
		b.Run("path=addr/impl="+impl, func(b *testing.B) {
			tr := tracker()
			var next atomic.Int32
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				mine := addrs[int(next.Add(1)-1)*100%len(addrs):][:100]
				i := 0
				for pb.Next() {
					tr.ObserveAddr(mine[i], 1, 200)
					if i++; i == len(mine) {
						i = 0
					}
				}
			})
		})
	}
}

// BenchmarkAllow is the per-event cost of the rate limiter in drop mode on
// one goroutine: limit=off is tracking without a limit (Observe's cost
// through Allow), limit=under a key within its limit (every event
// allowed), limit=over a key far over it (every event dropped and
// counted). path=handle is a stream's Handle, path=addr a lookup per
// datagram. One op is one event.
func BenchmarkAllow(b *testing.B) {
	addrs, _ := benchKeys()
	limits := []struct {
		name string
		lim  sources.Limit
	}{
		{"off", sources.Limit{}},
		{"under", sources.Limit{EventsPerSecond: 1e9, Burst: 1 << 40}},
		{"over", sources.Limit{EventsPerSecond: 1, Burst: 1}},
	}
	for _, l := range limits {
		tracker := func() *sources.Tracker {
			tr := newBench(b, sources.Policy{RateLimit: l.lim})
			for i := range addrs {
				tr.ObserveAddr(addrs[i], 1, 1)
			}
			return tr
		}
		b.Run("path=handle/limit="+l.name, func(b *testing.B) {
			h := tracker().Addr(addrs[0])
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += h.Allow(1, 200)
			}
			sink.Add(int64(n))
		})
		b.Run("path=addr/limit="+l.name, func(b *testing.B) {
			tr := tracker()
			b.ReportAllocs()
			n, i := 0, 0
			for b.Loop() {
				n += tr.AllowAddr(addrs[i], 1, 200)
				if i++; i == len(addrs) {
					i = 0
				}
			}
			sink.Add(int64(n))
		})
	}
	b.Run("path=handle/pace=under", func(b *testing.B) {
		tr := newBench(b, sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 1e9, Burst: 1 << 40}})
		h := tr.Addr(addrs[0])
		b.ReportAllocs()
		var wait int64
		for b.Loop() {
			wait += int64(h.Pace(1, 200))
		}
		sink.Add(wait)
	})
}

// BenchmarkNewKey is the cost of a key's first event in a full table: a
// lookup that misses, the eviction of the least recently seen key and the
// insertion (one entry allocated), with MaxSources 10,000.
func BenchmarkNewKey(b *testing.B) {
	tr := newBench(b, sources.Policy{})
	b.ReportAllocs()
	var i uint32
	for b.Loop() {
		i++
		benchClock.Add(1)
		tr.ObserveAddr(netip.AddrFrom4([4]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}), 1, 200)
	}
}

// sink keeps the compiler from removing the benchmarked loops' results.
var sink atomic.Int64
