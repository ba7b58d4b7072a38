package stream_test

import (
	"context"
	"log/slog"
	"sync"

	"github.com/relaykit/relaykit/stream"
)

// recordHandler keeps the messages of the records logged to it.
type recordHandler struct {
	mu      sync.Mutex
	msgs    []string
	reasons []string // the reason attribute of each record that has one
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Level.String()+" "+r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			h.reasons = append(h.reasons, a.Value.String())
		}
		return true
	})
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.msgs...)
}

func (h *recordHandler) reasonsLogged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reasons...)
}

// loopback returns cfg listening on a free loopback port, its connections
// served by h.
func loopback(cfg stream.Config, h stream.Handler) stream.Config {
	cfg.Address, cfg.Handler = "127.0.0.1:0", h
	return cfg
}
