// Package episode logs a recurring failure once when it starts and once
// when it ends, with the number of failures between: what a destination
// that is down for an hour, or a sender that keeps being refused, should
// cost the log.
package episode

import (
	"log/slog"
	"sync/atomic"
)

// Log tracks one kind of failure. The zero value is ready to use; it is
// safe for concurrent use by multiple goroutines.
type Log struct {
	failing  atomic.Bool
	failures atomic.Int64
}

// Fail counts a failure and, when it starts an episode, logs msg at Warn
// level with args. It reports whether it logged.
func (l *Log) Fail(log *slog.Logger, msg string, args ...any) bool {
	l.failures.Add(1)
	if l.failing.Load() || !l.failing.CompareAndSwap(false, true) {
		return false
	}
	log.Warn(msg, args...)
	return true
}

// OK ends an episode under way: it logs msg at Info level with args and
// "failures", the number of failures the episode counted. Without an
// episode it costs one atomic load and logs nothing.
func (l *Log) OK(log *slog.Logger, msg string, args ...any) bool {
	if !l.failing.Load() || !l.failing.CompareAndSwap(true, false) {
		return false
	}
	log.Info(msg, append(args, "failures", l.failures.Swap(0))...)
	return true
}

// Failing reports whether an episode is under way.
func (l *Log) Failing() bool { return l.failing.Load() }
