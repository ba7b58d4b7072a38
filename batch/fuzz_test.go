package batch_test

import (
	"context"
	"testing"

	"github.com/relaykit/relaykit/batch"
)

// FuzzLimits checks the count and byte rules on arbitrary item sizes: the
// batches, in order, are exactly the items added; no batch passes MaxEvents
// or MaxBytes (except an oversized item alone); and a batch is cut by a
// limit only when the next item could not have joined it.
func FuzzLimits(f *testing.F) {
	f.Add(uint8(3), uint8(10), []byte{4, 6, 1, 11, 3, 3, 3, 0, 0, 10})
	f.Add(uint8(1), uint8(1), []byte{0, 1, 2})
	f.Add(uint8(5), uint8(255), []byte{255, 255, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), uint8(7), []byte{})
	f.Fuzz(func(t *testing.T, maxEvents, maxBytes uint8, sizes []byte) {
		if maxEvents == 0 || maxBytes == 0 {
			return // zero means a default; covered elsewhere
		}
		type item struct{ id, size int }
		var batches [][]item
		c, err := batch.NewCollector(batch.Config[item]{
			MaxEvents:   int(maxEvents),
			MaxBytes:    int(maxBytes),
			Size:        func(v item) int { return v.size },
			MaxWait:     -1,
			MaxInFlight: 1,
		}, func(_ context.Context, b []item) error {
			batches = append(batches, append([]item(nil), b...))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		items := make([]item, len(sizes))
		for i, s := range sizes {
			items[i] = item{id: i, size: int(s)}
		}
		ctx := context.Background()
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		// Alternate between Add and AddBatch.
		for i := 0; i < len(items); {
			if i%2 == 0 {
				if err := c.Add(ctx, items[i]); err != nil {
					t.Fatal(err)
				}
				i++
				continue
			}
			j := min(len(items), i+3)
			if _, err := c.AddBatch(ctx, items[i:j]); err != nil {
				t.Fatal(err)
			}
			i = j
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}

		next := 0
		for bi, b := range batches {
			if len(b) == 0 {
				t.Fatalf("batch %d is empty", bi)
			}
			if len(b) > int(maxEvents) {
				t.Fatalf("batch %d has %d items, MaxEvents %d", bi, len(b), maxEvents)
			}
			sum := 0
			for _, it := range b {
				if it.id != next {
					t.Fatalf("batch %d: item %d, want %d", bi, it.id, next)
				}
				next++
				sum += it.size
			}
			if sum > int(maxBytes) && len(b) > 1 {
				t.Fatalf("batch %d has %d bytes in %d items, MaxBytes %d", bi, sum, len(b), maxBytes)
			}
			if bi < len(batches)-1 { // cut by a limit, not by Close
				nextSize := items[next].size
				if len(b) < int(maxEvents) && sum < int(maxBytes) && sum+nextSize <= int(maxBytes) {
					t.Fatalf("batch %d (%d items, %d bytes) cut though item of %d bytes fit", bi, len(b), sum, nextSize)
				}
			}
		}
		if next != len(items) {
			t.Fatalf("flushed %d items, added %d", next, len(items))
		}
		s := c.Stats()
		if s.Items != uint64(len(items)) || s.FlushedItems != s.Items {
			t.Fatalf("stats %+v for %d items", s, len(items))
		}
	})
}
