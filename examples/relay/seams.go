package main

import (
	"context"
	"sync"

	"github.com/relaykit/relaykit"
)

// memSpool is a TEMPORARY in-memory spool until storage.Spool lands.
type memSpool struct {
	mu      sync.Mutex
	batches [][]relaykit.Event
	n       int64
	max     int64
}

func openSpool(dir string, maxBytes int64) (spoolQueue, error) {
	return &memSpool{max: maxBytes}, nil
}

func (s *memSpool) Append(batch []relaykit.Event) error {
	c := make([]relaykit.Event, len(batch))
	for i := range batch {
		c[i] = batch[i].Clone()
	}
	s.mu.Lock()
	s.batches = append(s.batches, c)
	s.n += int64(len(c))
	s.mu.Unlock()
	return nil
}

func (s *memSpool) Replay(ctx context.Context, send func(context.Context, []relaykit.Event) error) (int, error) {
	total := 0
	for {
		s.mu.Lock()
		if len(s.batches) == 0 {
			s.mu.Unlock()
			return total, nil
		}
		b := s.batches[0]
		s.mu.Unlock()
		if err := send(ctx, b); err != nil {
			return total, err
		}
		s.mu.Lock()
		s.batches = s.batches[1:]
		s.n -= int64(len(b))
		s.mu.Unlock()
		total += len(b)
	}
}

func (s *memSpool) Len() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *memSpool) Close() error { return nil }
