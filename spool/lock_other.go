//go:build !unix

package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// lockFile creates name exclusively; Close removes it. A crash leaves the
// file behind, and the next open fails until it is removed by hand.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %s exists (remove it if no process uses the spool)", ErrLocked, name)
	}
	if err != nil {
		return nil, fmt.Errorf("spool: lock %s: %w", name, err)
	}
	return &exclLock{f: f, name: name}, nil
}

type exclLock struct {
	f    *os.File
	name string
}

func (l *exclLock) Close() error {
	err := l.f.Close()
	if rerr := os.Remove(l.name); err == nil {
		err = rerr
	}
	return err
}
