package input

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// generator produces synthetic events at a fixed rate for demos and load:
// each tick of 10 ms emits the events due by then, so the long-run rate is
// exact even when one tick is late. Events pass through the same syslog
// parser as network input.
type Generator struct {
	cfg   config.GeneratorConfig
	stats *ledger.InputStats
	loc   *time.Location
	tap   *tap.Point // input:generator (taps.go): each event, parsed
}

// newGenerator makes the generator of cfg; none when it is off.
func newGenerator(cfg *config.GeneratorConfig, env Env) (Input, error) {
	if !cfg.On() {
		return nil, nil
	}
	return &Generator{cfg: *cfg, stats: env.Ledger.Input(cfg.InputName(), cfg.Kind()), loc: env.Loc,
		tap: env.Taps.Point(tapInput + cfg.InputName())}, nil
}

// Addrs: none.
func (g *Generator) Addrs(func(string, net.Addr)) {}

// Close: nothing to release.
func (g *Generator) Close() error { return nil }

// Collect: the ledger has the generator's counts.
func (g *Generator) Collect(chan<- prometheus.Metric) {}

// frame renders event number i in the configured shape.
func (g *Generator) frame(dst []byte, i int64, now time.Time) []byte {
	ts := now.UTC().Format("2006-01-02T15:04:05.000000Z07:00") // RFC 5424 takes at most 6 fraction digits
	ip := func(n int64) string { return fmt.Sprintf("198.51.100.%d", n%250+1) }
	switch g.cfg.Shape {
	case "sshd":
		dst = fmt.Appendf(dst, "<38>1 %s gen-host sshd %d - - Failed password for invalid user admin%d from %s port %d ssh2",
			ts, 1000+i%50, i%97, ip(i), 40000+i%20000)
	case "firewall":
		dst = fmt.Appendf(dst, "<134>1 %s fw01 kernel - - - [UFW BLOCK] IN=eth0 OUT= SRC=%s DST=192.0.2.10 PROTO=TCP SPT=%d DPT=22 seq=%d",
			ts, ip(i), 40000+i%20000, i)
	case "json":
		dst = fmt.Appendf(dst, `{"ts":%q,"level":"info","msg":"request served","client":%q,"seq":%d}`, ts, ip(i), i)
	default:
		dst = fmt.Appendf(dst, "<14>1 %s gen-host app %d - - synthetic event seq=%d", ts, 1000+i%50, i)
	}
	return dst
}

// Run generates until ctx ends or Count events were produced; what it
// generated is in the engine when it returns.
func (g *Generator) Run(ctx, _ context.Context) error {
	sp := NewSyslogParser(g.loc)
	one := make([]relaykit.Event, 1) // the tap's batch: the event pushed
	ev := &one[0]
	var buf []byte
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var sent int64
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			due := int64(now.Sub(start).Seconds() * float64(g.cfg.Rate))
			if g.cfg.Count > 0 {
				due = min(due, g.cfg.Count)
			}
			for ; sent < due; sent++ {
				buf = g.frame(buf[:0], sent, now)
				if g.cfg.Shape == "json" {
					ev.Reset()
					ev.Raw = append(ev.Raw, buf...)
					ev.Host = append(ev.Host, "generator"...)
					ev.SourceType = append(ev.SourceType, "json"...)
				} else {
					sp.Parse(ev, buf, "generator")
				}
				ev.SetFieldString("seq", strconv.FormatInt(sent, 10))
				g.stats.Bytes.Add(int64(len(buf)))
				g.tap.Publish(one)
				if err := g.stats.In.Push(ctx, 0, ev); err != nil {
					return nil
				}
			}
			if g.cfg.Count > 0 && sent >= g.cfg.Count {
				<-ctx.Done()
				return nil
			}
		}
	}
}
