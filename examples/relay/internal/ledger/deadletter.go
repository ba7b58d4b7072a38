package ledger

import (
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/relaykit/relaykit/storage/deadletter"
)

// deadLetterFile is the dead-letter file as a deadLetter writes to it, one
// line per Write: it counts the lines the file took
// (relay_dead_letter_lines_total) and the writes that failed
// (relay_dead_letter_write_errors_total and dead_letter_errors in the
// ledger line; each loses its line, whose event is counted as dropped
// anyway), and logs the first failure of an episode and the recovery. The
// file is unbuffered (one write(2) per line), so a failure is known at the
// Write that lost the line. storage.Writer's errors are not sticky: each
// line is tried on its own, so the file takes lines again as soon as the
// disk does.
type deadLetterFile struct {
	w      io.Writer
	ledger *Ledger
	log    *slog.Logger
	failed atomic.Bool
}

// newDeadLetterFile counts the lines written to w in l, logging to log.
func NewDeadLetterFile(w io.Writer, l *Ledger, log *slog.Logger) *deadLetterFile {
	return &deadLetterFile{w: w, ledger: l, log: log}
}

func (f *deadLetterFile) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		f.ledger.deadLetterErrors.Add(1)
		if f.failed.CompareAndSwap(false, true) {
			f.log.Error("writing the dead-letter file failed: its lines are lost (counted in relay_dead_letter_write_errors_total) until it writes again", "err", err)
		}
		return n, err
	}
	if f.failed.CompareAndSwap(true, false) {
		f.log.Info("the dead-letter file writes again")
	}
	f.ledger.deadLettered.Add(1)
	return n, nil
}

// deadLetter keeps input the relay could not accept in the dead-letter
// file, as JSON Lines (storage/deadletter: the bytes recoverable exactly,
// whatever they are).
type DeadLetter struct{ w *deadletter.Writer }

func NewDeadLetter(w io.Writer) *DeadLetter {
	dw, _ := deadletter.NewWriter(deadletter.Config{Writer: w, Clock: clk}) // fails only without a Writer
	return &DeadLetter{dw}
}

// Write records one rejected line and returns the write's error (counted
// by the file, deadLetterFile); the line is counted as dropped
// (invalid_json, rejected) all the same.
func (d *DeadLetter) Write(input, peer, reason string, line []byte) error {
	return d.w.Write(deadletter.Record{Input: input, Peer: peer, Reason: reason, Line: line})
}

// Writer is the dead-letter writer itself, for the library inputs that
// write to it (input.JSONLinesConfig.DeadLetters).
func (d *DeadLetter) Writer() *deadletter.Writer {
	if d == nil {
		return nil
	}
	return d.w
}
