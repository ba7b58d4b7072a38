//go:build unix

package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// lockFile takes an exclusive, non-blocking flock(2) on name. flock locks
// belong to the open file description, so a second lock from this process
// fails as one from another process does. The lock file holds the pid of
// its owner, for the error message of the next one.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("spool: lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner := ""
		if b, rerr := os.ReadFile(name); rerr == nil && len(b) > 0 {
			owner = " (held by pid " + string(b) + ")"
		}
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked%s", ErrLocked, name, owner)
		}
		return nil, fmt.Errorf("spool: lock %s: %w", name, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	return f, nil // closing the file releases the lock
}
