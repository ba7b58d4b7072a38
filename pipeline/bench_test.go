package pipeline_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// BenchmarkFilterMatch compares a Filter with the bare regexp on a
// 200-byte line that does not match, per pattern.
func BenchmarkFilterMatch(b *testing.B) {
	line := []byte(`<38>Nov 22 02:11:09 host-12 sshd[2211]: Accepted publickey for deploy from 198.51.100.4 port 40022 ssh2: RSA SHA256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 k1=v2 k3=v4`)
	for _, p := range []string{
		`sshd\[\d+\]: Failed password for`,
		`\b(?:DENY|DROP)\b`,
		`HTTP/1\.[01]" 5\d\d `,
		`(?i)error|fatal|panic`,
	} {
		f, err := pipeline.CompileFilter(p)
		if err != nil {
			b.Fatal(err)
		}
		re := regexp.MustCompile(p)
		b.Run("pattern="+p+"/impl=filter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f.Match(line) {
					b.Fatal("match")
				}
			}
		})
		b.Run("pattern="+p+"/impl=regexp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if re.Match(line) {
					b.Fatal("match")
				}
			}
		})
	}
}

// nopSink counts what it is sent and does nothing else.
type nopSink struct{ n int }

func (s *nopSink) Send(_ context.Context, b []relaykit.Event) error {
	s.n += len(b)
	return nil
}

// BenchmarkDeliver measures the router's delivery alone: filters that
// take every event (no matching cost), no pipeline functions, sinks that
// only count. One op is one event of a batch of 256. final: one Final
// route to n sinks (as the relay sends each event to HEC and the
// archive); copy+final: a non-final route to one sink first, so every
// event is also copied.
func BenchmarkDeliver(b *testing.B) {
	ev := relaykit.Event{Host: []byte("host-12"), Source: []byte("sshd"), SourceType: []byte("syslog"),
		Raw: []byte(`Failed password for invalid user admin from 203.0.113.45 port 52113 ssh2`)}
	ev.SetFieldString("pid", "2211")
	batch := make([]relaykit.Event, 256)
	for i := range batch {
		batch[i] = ev
	}
	for _, tc := range []struct {
		name  string
		sinks int
		copy  bool
	}{{"final/sinks=1", 1, false}, {"final/sinks=2", 2, false}, {"final/sinks=4", 4, false}, {"copy+final/sinks=2", 2, true}} {
		b.Run(tc.name, func(b *testing.B) {
			var sinks []relaykit.Sink
			var counts []*nopSink
			for range tc.sinks {
				s := &nopSink{}
				sinks, counts = append(sinks, s), append(counts, s)
			}
			var routes []pipeline.Route
			if tc.copy {
				c := &nopSink{}
				counts = append(counts, c)
				routes = append(routes, pipeline.Route{Name: "copy", Sinks: []relaykit.Sink{c}})
			}
			routes = append(routes, pipeline.Route{Name: "all", Sinks: sinks, Final: true})
			r, err := pipeline.NewRouter(routes, pipeline.Config{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if n%len(batch) == 0 {
					if err := r.Route(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
			want := (n + len(batch) - 1) / len(batch) * len(batch)
			for _, c := range counts {
				if c.n != want {
					b.Fatalf("sink got %d events, want %d", c.n, want)
				}
			}
		})
	}
}
