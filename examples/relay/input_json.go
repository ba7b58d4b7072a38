package main

import (
	"context"
	"io"
	"strconv"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/storage/deadletter"
	"github.com/relaykit/relaykit/stream"
	"github.com/valyala/fastjson"
)

// jsonStream handles one JSON-lines connection: each LF-terminated line
// (at most MaxLineSize bytes) must be a valid JSON value. Valid lines become
// events (Raw = the line, SourceType "json"), handed to the ring a read at
// a time as syslogStream does (and counted the same way when the shutdown
// deadline cuts a push short); invalid or oversized lines are counted and
// written to the dead-letter file, never forwarded.
//
// With sources tracked (src not nil), lines count for the connection's
// source (its address) and its rate limit applies as for syslog_tcp.
func jsonStream(in JSONInputConfig, stats *inputStats, dl *deadLetter, budget *stream.ReadBudget, src *sourceTracker) func(context.Context, *stream.Conn, string, uint64) {
	return func(ctx context.Context, c *stream.Conn, peer string, shard uint64) {
		b := stats.in.NewProducer(shard)
		defer b.Release()
		cs := src.streamConn(in.Name, c.Source())
		defer cs.Close()
		stop := stopContext(ctx)
		fr := stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: int(in.MaxLineSize), Framing: stream.Delimited, Counters: &stats.framing,
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
			stats.bytes.Add(int64(len(line)))
			if cut || fastjson.ValidateBytes(line) != nil {
				reason := "invalid json"
				if cut {
					reason = "line longer than " + strconv.Itoa(int(in.MaxLineSize)) + " bytes"
				}
				stats.invalid.Add(1)
				stats.in.Drop(relaykit.ReasonInvalidJSON, 1)
				_ = dl.Write(in.Name, peer, reason, line) // failures are counted by the dead letter
				continue
			}
			if b.Err() != nil {
				stats.in.Drop(relaykit.ReasonShutdownUnqueued, 1)
				continue
			}
			ev := b.Event()
			fillJSONEvent(ev, line, peer)
			if !cs.Event(ev.Host, len(line)) {
				b.Unget() // over its source's limit
				stats.in.Drop(relaykit.ReasonRateLimit, 1)
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
func fillJSONEvent(ev *relaykit.Event, line []byte, peer string) {
	ev.Reset()
	ev.Raw = append(ev.Raw, line...)
	ev.Host = append(ev.Host, peer...)
	ev.SourceType = append(ev.SourceType, "json"...)
}

// deadLetter keeps input the relay could not accept in the dead-letter
// file, as JSON Lines (storage/deadletter: the bytes recoverable exactly,
// whatever they are).
type deadLetter struct{ w *deadletter.Writer }

func newDeadLetter(w io.Writer) *deadLetter {
	dw, _ := deadletter.NewWriter(deadletter.Config{Writer: w, Clock: clk}) // fails only without a Writer
	return &deadLetter{dw}
}

// Write records one rejected line and returns the write's error (counted
// by the file, deadLetterFile); the line is counted as dropped
// (invalid_json, rejected) all the same.
func (d *deadLetter) Write(input, peer, reason string, line []byte) error {
	return d.w.Write(deadletter.Record{Input: input, Peer: peer, Reason: reason, Line: line})
}
