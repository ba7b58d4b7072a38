// Package spooltest injects disk faults into the storage package's
// [spool.FS]: writes that fail with ENOSPC or EIO (whole, or after
// writing part of the data, as a torn write), failing fsync, failing reads,
// creations and removals. It also damages files in place, as disks and
// power losses do: flipped bits, zeroed pages, truncated tails.
//
// It works outside go test: an agent can run its delivery queue on a
// FaultFS to see what its users would see when the disk fails.
package spooltest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/relaykit/relaykit/spool"
)

// Op is a kind of file system operation a [Fault] applies to.
type Op int

// Operations.
const (
	OpWrite    Op = iota // File.WriteAt
	OpSync               // File.Sync
	OpRead               // File.ReadAt
	OpCreate             // FS.OpenFile with os.O_CREATE
	OpRemove             // FS.Remove
	OpTruncate           // File.Truncate
)

// String returns the operation's name: "write", "sync", ...
func (o Op) String() string {
	switch o {
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	case OpRead:
		return "read"
	case OpCreate:
		return "create"
	case OpRemove:
		return "remove"
	case OpTruncate:
		return "truncate"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Fault makes matching operations fail.
type Fault struct {
	// Op is the operation that fails.
	Op Op
	// Name is a filepath.Match pattern for the base name of the file, such
	// as "*.seg" or "head". Empty matches every file.
	Name string
	// After lets this many matching operations succeed before the first
	// failure.
	After int
	// Times is how many matching operations fail; zero means every one
	// until the fault is cleared.
	Times int
	// Err is the error returned, for example syscall.ENOSPC or
	// syscall.EIO, wrapped in an *fs.PathError.
	Err error
	// Partial makes a failing write write the first half of its data
	// before it fails, as a write torn by a full disk does.
	Partial bool
}

// FaultFS is a [spool.FS] that passes operations to FS and fails those
// that match an injected [Fault]. It is safe for concurrent use.
type FaultFS struct {
	// FS is the file system faults are injected into. Nil means
	// spool.OSFS.
	FS spool.FS

	mu     sync.Mutex
	faults []*active
	counts map[Op]int
	failed map[Op]int
}

type active struct {
	Fault
	seen, failed int
}

var _ spool.FS = (*FaultFS)(nil)

// Inject adds a fault and returns a function that removes it.
func (f *FaultFS) Inject(ft Fault) (clear func()) {
	a := &active{Fault: ft}
	f.mu.Lock()
	f.faults = append(f.faults, a)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, x := range f.faults {
			if x == a {
				f.faults = append(f.faults[:i], f.faults[i+1:]...)
				return
			}
		}
	}
}

// Clear removes every fault.
func (f *FaultFS) Clear() {
	f.mu.Lock()
	f.faults = nil
	f.mu.Unlock()
}

// Count returns how many operations of kind op were attempted.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// Failed returns how many operations of kind op failed by injection.
func (f *FaultFS) Failed(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed[op]
}

func (f *FaultFS) inner() spool.FS {
	if f.FS == nil {
		return spool.OSFS{}
	}
	return f.FS
}

// check counts an operation on name and returns the fault it triggers.
func (f *FaultFS) check(op Op, name string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts, f.failed = map[Op]int{}, map[Op]int{}
	}
	f.counts[op]++
	base := filepath.Base(name)
	for _, a := range f.faults {
		if a.Op != op {
			continue
		}
		if a.Name != "" {
			if ok, _ := filepath.Match(a.Name, base); !ok {
				continue
			}
		}
		a.seen++
		if a.seen <= a.After || (a.Times > 0 && a.failed >= a.Times) {
			continue
		}
		a.failed++
		f.failed[op]++
		ft := a.Fault
		return &ft
	}
	return nil
}

func pathErr(op Op, name string, err error) error {
	return &fs.PathError{Op: op.String(), Path: name, Err: err}
}

// OpenFile opens name through FS, failing as an OpCreate fault says when
// flag has os.O_CREATE.
func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (spool.File, error) {
	if flag&os.O_CREATE != 0 {
		if ft := f.check(OpCreate, name); ft != nil {
			return nil, pathErr(OpCreate, name, ft.Err)
		}
	}
	file, err := f.inner().OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

// Remove removes name through FS, failing as an OpRemove fault says.
func (f *FaultFS) Remove(name string) error {
	if ft := f.check(OpRemove, name); ft != nil {
		return pathErr(OpRemove, name, ft.Err)
	}
	return f.inner().Remove(name)
}

// ReadDir lists name through FS.
func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) { return f.inner().ReadDir(name) }

// MkdirAll creates name through FS.
func (f *FaultFS) MkdirAll(name string, perm fs.FileMode) error {
	return f.inner().MkdirAll(name, perm)
}

// Lock locks name through FS.
func (f *FaultFS) Lock(name string) (io.Closer, error) { return f.inner().Lock(name) }

type faultFile struct {
	spool.File
	fs   *FaultFS
	name string
}

func (ff *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if ft := ff.fs.check(OpWrite, ff.name); ft != nil {
		n := 0
		if ft.Partial && len(p) > 1 {
			n, _ = ff.File.WriteAt(p[:len(p)/2], off)
		}
		return n, pathErr(OpWrite, ff.name, ft.Err)
	}
	return ff.File.WriteAt(p, off)
}

func (ff *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if ft := ff.fs.check(OpRead, ff.name); ft != nil {
		return 0, pathErr(OpRead, ff.name, ft.Err)
	}
	return ff.File.ReadAt(p, off)
}

func (ff *faultFile) Sync() error {
	if ft := ff.fs.check(OpSync, ff.name); ft != nil {
		return pathErr(OpSync, ff.name, ft.Err)
	}
	return ff.File.Sync()
}

func (ff *faultFile) Truncate(size int64) error {
	if ft := ff.fs.check(OpTruncate, ff.name); ft != nil {
		return pathErr(OpTruncate, ff.name, ft.Err)
	}
	return ff.File.Truncate(size)
}

// FlipBit inverts bit (0-7) of the byte at off in the file at path, as a
// failing disk or cable might.
func FlipBit(path string, off int64, bit uint) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return err
	}
	b[0] ^= 1 << (bit & 7)
	_, err = f.WriteAt(b[:], off)
	return err
}

// Zero overwrites n bytes at off in the file at path with zeros: what a
// page the kernel never wrote back looks like after a power loss (on file
// systems that zero-fill).
func Zero(path string, off, n int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(make([]byte, n), off)
	return err
}

// Truncate cuts the file at path to size bytes.
func Truncate(path string, size int64) error { return os.Truncate(path, size) }
