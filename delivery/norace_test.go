//go:build !race

package delivery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
)

// TestSendAllocs: the healthy path allocates per batch, never per event:
// Send and the sender together make a few allocations per batch of 500
// events (the attempt's context and timer), in every mode; in mode Memory
// the batch is not even copied. The count is process-wide and the sender
// runs on its own goroutine, so how often it parks and wakes (a timer, a
// context) moves it: 4 to 14 per batch have been seen on a busy machine.
// The bound, 50, is ten times below one allocation per event.
func TestSendAllocs(t *testing.T) {
	batch := benchBatch()
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure, delivery.Memory} {
		dir := t.TempDir()
		if mode == delivery.Memory {
			dir = ""
		}
		q, err := delivery.New(&countSink{}, delivery.Config{Dir: dir, Mode: mode})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- q.Run(ctx) }()
		for range 50 { // warm the pools
			require.NoError(t, q.Send(ctx, batch))
		}
		allocs := testing.AllocsPerRun(200, func() {
			_ = q.Send(ctx, batch)
		})
		stop, c2 := context.WithTimeout(ctx, time.Minute)
		require.NoError(t, q.Close(stop))
		c2()
		cancel()
		<-done
		assert.LessOrEqual(t, allocs, 50.0, "%s: allocations per batch of %d events", mode, len(batch))
		t.Logf("%s: %.1f allocations per batch of %d events", mode, allocs, len(batch))
	}
}

// countReqSink is countSink as a relaykit.RequestSink that encodes a batch
// into one request of its messages, reusing the request's buffer.
type countReqSink struct{ countSink }

func (c *countReqSink) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, relaykit.Request{})
	}
	r := &dst[len(dst)-1]
	r.Format, r.Events, r.Body = "test.count", len(batch), r.Body[:0]
	for i := range batch {
		r.Body = append(r.Body, batch[i].Raw...)
	}
	return dst, nil
}

func (c *countReqSink) SendRequests(_ context.Context, reqs []relaykit.Request) error {
	for i := range reqs {
		c.bytes += len(reqs[i].Body)
	}
	return nil
}

func (c *countReqSink) CutRequest(*relaykit.Request, int, int) (relaykit.Request, error) {
	return relaykit.Request{}, errors.New("not cut")
}

func (c *countReqSink) DecodeRequest(dst []relaykit.Event, _ *relaykit.Request) ([]relaykit.Event, error) {
	return dst, errors.New("not decoded")
}

// TestSendAllocsRequests is TestSendAllocs for a sink that encodes ahead:
// the batch is encoded into the pooled entry's request buffers and written
// ahead as a record of requests, with a few allocations per batch, never
// per event.
func TestSendAllocsRequests(t *testing.T) {
	batch := benchBatch()
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		q, err := delivery.New(&countReqSink{}, delivery.Config{Dir: t.TempDir(), Mode: mode})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- q.Run(ctx) }()
		for range 50 { // warm the pools
			require.NoError(t, q.Send(ctx, batch))
		}
		allocs := testing.AllocsPerRun(200, func() {
			_ = q.Send(ctx, batch)
		})
		stop, c2 := context.WithTimeout(ctx, time.Minute)
		require.NoError(t, q.Close(stop))
		c2()
		cancel()
		<-done
		assert.LessOrEqual(t, allocs, 50.0, "%s: allocations per batch of %d events", mode, len(batch))
		t.Logf("%s: %.1f allocations per batch of %d events", mode, allocs, len(batch))
	}
}
