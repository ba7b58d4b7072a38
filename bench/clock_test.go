package bench

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	timecache "github.com/agilira/go-timecache"

	"github.com/relaykit/relaykit/clock"
)

// clockImpls are the coarse clocks compared: relaykit's clock (ticking
// while read), go-timecache's default cache (ticking from import on), and
// time.Now for scale.
var clockImpls = []struct {
	name string
	nano func() int64
}{
	{"clock", clock.Default().Nano},
	{"timecache", timecache.CachedTimeNano},
	{"time.Now", func() int64 { return time.Now().UnixNano() }},
}

// BenchmarkClockRead is the cost of one read, from one goroutine and from
// all of them at once (one op = one read).
func BenchmarkClockRead(b *testing.B) {
	for _, impl := range clockImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				sink += impl.nano()
			}
			if sink == 0 {
				b.Fatal("clock read zero")
			}
		})
		b.Run("parallel/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var n, sink int64
				for pb.Next() {
					sink += impl.nano()
					n++
				}
				if n > 0 && sink == 0 {
					b.Error("clock read zero")
				}
			})
		})
	}
}

// BenchmarkClockStaleness reads each clock next to time.Now and reports how
// far behind it was: the mean (stale-ns/op) and the largest (max-stale-ns)
// lag seen. One op = one read of each.
func BenchmarkClockStaleness(b *testing.B) {
	for _, impl := range clockImpls[:2] {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var sum, most int64
			for b.Loop() {
				c := impl.nano()
				d := time.Now().UnixNano() - c
				sum += d
				most = max(most, d)
			}
			b.ReportMetric(float64(sum)/float64(b.N), "stale-ns/op")
			b.ReportMetric(float64(most), "max-stale-ns")
		})
	}
}

// TestIdleCPU builds two programs, one importing every relaykit package and
// one importing go-timecache, lets each sit idle for 3 s, and logs the CPU
// each used (go test -run TestIdleCPU -v ./ in bench). The relaykit
// program's bound is asserted in the library's own tests
// (TestIdleImporterCostsNothing); this one records the comparison.
func TestIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two programs for 3 s each")
	}
	dir := t.TempDir()
	got := map[string]float64{}
	for _, name := range []string{"relaykit", "timecache"} {
		bin := filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/idlecpu/"+name).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
		out, err := exec.Command(bin, "-window", "3s").Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f := strings.Fields(string(out)) // idle-cpu: <ns> ns <pct> %
		if len(f) != 5 {
			t.Fatalf("%s printed %q", name, out)
		}
		pct, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = pct
		t.Logf("%s: idle CPU %s ns in 3 s, %.4f %% of a core", name, f[1], pct)
	}
	if got["timecache"] <= got["relaykit"] {
		t.Errorf("go-timecache's ticker should cost more idle CPU than relaykit's clock: %v", got)
	}
}
