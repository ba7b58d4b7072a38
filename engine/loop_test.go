package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/syslog"
)

// fieldSink records every routed event's message, fields and receive
// time, keyed by the message's sequence number (its MSGID).
type fieldSink struct {
	mu  sync.Mutex
	got map[string]loopEvent
}

type loopEvent struct {
	fields      map[string]string
	receiveTime int64
}

func (s *fieldSink) Send(_ context.Context, batch []relaykit.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range batch {
		e := &batch[i]
		id, _ := e.Field(syslog.FieldMsgID)
		f := map[string]string{}
		for _, kv := range e.Fields {
			f[string(kv.Key)] = string(kv.Value)
		}
		s.got[string(id)] = loopEvent{fields: f, receiveTime: e.ReceiveTime}
	}
	return nil
}

// TestProducerLoopAsDocumented follows the loop of the Producer's
// documentation literally, with the syslog parser as the parse step: one
// message per read, a third of them carrying structured data, batches
// routed as they fill. Every event carries the fields of its own message
// and nothing else, and a receive time of its own: the engine clock's time
// when it was pushed (none left over from the event whose buffers it
// reuses).
func TestProducerLoopAsDocumented(t *testing.T) {
	sink := &fieldSink{got: map[string]loopEvent{}}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	e := newEngine(t, engine.Config{Sink: sink, Workers: 1, BatchMaxEvents: 100, Clock: clk})
	done := start(t, e)
	parser := syslog.NewParser(syslog.Config{})
	in := e.NewInput("syslog")
	ctx := t.Context()

	const n = 3000
	reads := make([][]byte, n)
	for i := range n {
		sd := "-"
		if i%3 == 0 {
			sd = fmt.Sprintf(`[origin@32473 seq="%d"][meta@32473 only%d="x"]`, i, i)
		}
		reads[i] = fmt.Appendf(nil, "<34>1 2026-11-28T12:00:00Z host app - m%d %s message %d", i, sd, i)
	}
	p := in.NewProducer(0)
	defer p.Release()
	for i, read := range reads { // for each read: Flush first, the read may wait
		require.NoError(t, p.Flush(ctx))
		clk.Set(t0.Add(time.Duration(i) * time.Millisecond)) // the read's time: its events are stamped with it when pushed
		for _, frame := range [][]byte{read} {               // for each frame of the read
			ev := p.Event()
			parser.Parse(ev, frame)
			if p.Full() {
				require.NoError(t, p.Push(ctx))
			}
		}
	}
	require.NoError(t, p.Flush(ctx))
	require.NoError(t, e.Shutdown(ctx))
	require.NoError(t, <-done)

	require.Len(t, sink.got, n)
	leaked := 0
	for i := range n {
		got, ok := sink.got[fmt.Sprintf("m%d", i)]
		require.True(t, ok, "event %d routed", i)
		want := map[string]string{syslog.FieldMsgID: fmt.Sprintf("m%d", i)}
		if i%3 == 0 {
			want["sd.origin@32473.seq"] = fmt.Sprint(i)
			want[fmt.Sprintf("sd.meta@32473.only%d", i)] = "x"
		}
		if !assert.Equal(t, want, got.fields, "event %d carries its own fields only", i) {
			leaked++
		}
		assert.Equal(t, t0.Add(time.Duration(i)*time.Millisecond).UnixNano(), got.receiveTime, "event %d has a receive time of its own", i)
		if leaked > 5 {
			t.FailNow()
		}
	}
}
