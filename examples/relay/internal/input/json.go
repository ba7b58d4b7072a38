package input

import (
	"context"
	"strconv"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream"
	"github.com/valyala/fastjson"
)

// newJSONInput binds the JSON-lines input of in.
func newJSONInput(in *config.JSONInputConfig, env Env) (*StreamInput, error) {
	st := env.Ledger.Input(in.Name, in.Kind())
	l, err := ListenStream(in.Name, in.Listen, nil, in.MaxConnections, in.IdleTimeout, in.StreamLimits, st, env.Log)
	if err != nil {
		return nil, err
	}
	l.Handle = JSONStream(*in, st, env.DeadLetter, l.Budget, env.Sources)
	// The engine's producers show the point each read's events, parsed.
	st.In.Observe(env.Taps.Point(tapInput + in.Name))
	return l, nil
}

// jsonStream handles one JSON-lines connection: each LF-terminated line
// (at most MaxLineSize bytes) must be a valid JSON value. Valid lines become
// events (Raw = the line, SourceType "json"), handed to the ring a read at
// a time as syslogStream does (and counted the same way when the shutdown
// deadline cuts a push short); invalid or oversized lines are counted and
// written to the dead-letter file, never forwarded.
//
// With sources tracked (src not nil), lines count for the connection's
// source (its address) and its rate limit applies as for syslog_tcp.
func JSONStream(in config.JSONInputConfig, stats *ledger.InputStats, dl *ledger.DeadLetter, budget *stream.ReadBudget, src *SourceTracker) func(context.Context, *stream.Conn, string, uint64) {
	return func(ctx context.Context, c *stream.Conn, peer string, shard uint64) {
		b := stats.In.NewProducer(shard)
		defer b.Release()
		cs := src.StreamConn(in.Name, c.Source())
		defer cs.Close()
		stop := stopContext(ctx)
		fr := stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: int(in.MaxLineSize), Framing: stream.Delimited, Counters: &stats.Framing,
			ReadSize: int(in.ReadSize), Budget: budget,
			BeforeRead: func() error {
				if err := b.Flush(ctx); err != nil {
					return err
				}
				return cs.BeforeRead(stop)
			},
		})
		defer fr.Release()
		for {
			line, fl, err := fr.Next()
			if err != nil {
				_ = b.Push(ctx) // lines read with the error
				return
			}
			cut := fl&stream.Truncated != 0
			stats.Bytes.Add(int64(len(line)))
			if cut || fastjson.ValidateBytes(line) != nil {
				reason := "invalid json"
				if cut {
					reason = "line longer than " + strconv.Itoa(int(in.MaxLineSize)) + " bytes"
				}
				stats.Invalid.Add(1)
				stats.In.Drop(relaykit.ReasonInvalidJSON, 1)
				_ = dl.Write(in.Name, peer, reason, line) // failures are counted by the dead letter
				continue
			}
			if b.Err() != nil {
				stats.In.Drop(relaykit.ReasonShutdownUnqueued, 1)
				continue
			}
			ev := b.Event()
			FillJSONEvent(ev, line, peer)
			if !cs.Event(ev.Host, len(line)) {
				b.Unget() // over its source's limit
				stats.In.Drop(relaykit.ReasonRateLimit, 1)
				continue
			}
			if b.Full() {
				_ = b.Push(ctx) // a failure is counted; later lines are dropped above
			}
		}
	}
}

// fillJSONEvent makes ev (reset first) the event of a valid JSON line
// from peer.
func FillJSONEvent(ev *relaykit.Event, line []byte, peer string) {
	ev.Reset()
	ev.Raw = append(ev.Raw, line...)
	ev.Host = append(ev.Host, peer...)
	ev.SourceType = append(ev.SourceType, "json"...)
}
