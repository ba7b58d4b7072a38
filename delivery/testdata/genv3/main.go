// Command genv3 writes the spool directories of version 3 (relaykit at
// e993e75) that the upgrade tests of spool and delivery read: run it from
// a checkout of that commit,
//
//	go run ./cmd/genv3 <out>
//
// and copy <out>/spool-v3 to spool/testdata/spool-v3 and <out>/queue-v3
// to delivery/testdata/queue-v3.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/spool"
)

// event returns event i of the test data: a parsed RFC 5424 message.
func event(i int) relaykit.Event {
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixNano()
	e := relaykit.Event{
		ReceiveTime: base + int64(i)*int64(time.Second) + 500*int64(time.Millisecond),
		Time:        base + int64(i)*int64(time.Second),
		Host:        []byte(fmt.Sprintf("host-%d", i%3)),
		Source:      []byte("app"),
		SourceType:  []byte("syslog"),
		Raw:         []byte(fmt.Sprintf("event %d: user login accepted from 192.0.2.%d", i, i%250)),
		Priority:    13,
		Flags:       relaykit.FlagPriority,
	}
	e.SetField("procid", []byte("4242"))
	e.SetField("msgid", fmt.Appendf(nil, "ID%d", i))
	return e
}

func batch(first, n int) []relaykit.Event {
	b := make([]relaykit.Event, n)
	for i := range b {
		b[i] = event(first + i)
	}
	return b
}

func main() {
	out := os.Args[1]
	if err := spoolDir(filepath.Join(out, "spool-v3")); err != nil {
		panic(err)
	}
	if err := queueDir(filepath.Join(out, "queue-v3")); err != nil {
		panic(err)
	}
}

// spoolDir: 20 batches of 5 events (0-99) in segments of 4 KiB, the first
// three acknowledged.
func spoolDir(dir string) error {
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 4096})
	if err != nil {
		return err
	}
	for b := range 20 {
		if _, err := s.Append(batch(b*5, 5)); err != nil {
			return err
		}
	}
	for range 3 {
		rec, err := s.Peek()
		if err != nil {
			return err
		}
		if err := s.Ack(rec.ID); err != nil {
			return err
		}
	}
	return s.Close()
}

var errDown = errors.New("destination down")

// queueDir: a delivery.Queue (write-ahead, the default) whose destination
// takes the first 30 events, then is down; 30 batches of 10 events (0-299)
// are sent, and the queue is closed with 270 of them on disk.
func queueDir(dir string) error {
	taken := 0
	sink := relaykit.SinkFunc(func(_ context.Context, b []relaykit.Event) error {
		if taken+len(b) > 30 {
			return errDown
		}
		taken += len(b)
		return nil
	})
	q, err := delivery.New(sink, delivery.Config{Name: "sentinel", Dir: dir, SegmentBytes: 64 << 10, MemoryBatches: 1})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	for b := range 30 {
		if err := q.Send(ctx, batch(b*10, 10)); err != nil {
			return err
		}
		if b < 3 {
			for q.Stats().Delivered < int64(b+1)*10 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer ccancel()
	err = q.Close(cctx)
	cancel()
	<-done
	st := q.Stats()
	fmt.Printf("queue: delivered %d, pending %d, spool %d events\n", st.Delivered, st.Pending, st.SpoolEvents)
	return err
}
