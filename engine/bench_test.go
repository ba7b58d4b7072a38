package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
)

// BenchmarkProducer: one op is one event parsed into a producer's slab by
// a stream connection and routed inline to a Sink that does nothing, in
// reads of 100 events and batches of 1000.
func BenchmarkProducer(b *testing.B) {
	e, err := engine.New(engine.Config{Sink: nop{}, Workers: 1, BatchMaxWait: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	in := e.NewInput("tcp")
	p := in.NewProducer(0)
	msg := []byte("<13>1 2026-11-27T12:00:00Z host app - - - a message of some length, as syslog sends")
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x := p.Event()
		x.Reset()
		x.Raw = append(x.Raw, msg...)
		if i++; i%100 == 0 || p.Full() {
			if err := p.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	p.Release()
	_ = e.Shutdown(ctx)
	<-done
	if s := e.Stats(); s.Routed != s.Received {
		b.Fatalf("routed %d of %d", s.Routed, s.Received)
	}
}

// BenchmarkPush: one op is one event copied in with Input.Push by one
// goroutine and drained by the worker.
func BenchmarkPush(b *testing.B) {
	e, err := engine.New(engine.Config{Sink: nop{}, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	in := e.NewInput("gen")
	x := relaykit.Event{Raw: []byte("<13>1 2026-11-27T12:00:00Z host app - - - a message")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := in.Push(ctx, 0, &x); err != nil {
			b.Fatal(err)
		}
	}
	_ = e.Shutdown(ctx)
	<-done
}
