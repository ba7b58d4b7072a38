package service

import (
	"context"
	"fmt"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
)

// statsLoop prints the one-line summary every interval until ctx ends.
func statsLoop(ctx context.Context, l *ledger.Ledger, every time.Duration, log func(string)) {
	t := time.NewTicker(every)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s := l.Snapshot()
			rate := float64(s.Received-prev) / every.Seconds()
			prev = s.Received
			log(fmt.Sprintf("%s rate=%.0f/s", s, rate))
		}
	}
}
