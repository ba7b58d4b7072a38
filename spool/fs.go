package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the file system a [Spool] works on. Nil in [Config] means the
// operating system's. Tests (and users testing their own agents) inject
// disk faults through it: ENOSPC, EIO, failing fsync, torn writes; package
// spooltest has a FaultFS that does so.
//
// Names are slash or OS paths as the os package takes them. An FS must be
// safe for concurrent use by multiple goroutines.
type FS interface {
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Remove removes a file as os.Remove does.
	Remove(name string) error
	// ReadDir lists a directory as os.ReadDir does.
	ReadDir(name string) ([]fs.DirEntry, error)
	// MkdirAll creates a directory and its parents as os.MkdirAll does.
	MkdirAll(name string, perm fs.FileMode) error
	// Lock takes an exclusive, advisory lock on the file name (creating
	// it), held until the returned Closer is closed or the process ends.
	// It fails at once with an error wrapping [ErrLocked] when the lock
	// is held, by this process or another.
	Lock(name string) (io.Closer, error)
}

// File is an open file of an [FS]. *os.File implements it.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync commits the file's data to stable storage (fsync(2)).
	Sync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Stat returns the file's information.
	Stat() (fs.FileInfo, error)
}

// ErrLocked is wrapped by the error [Open] returns when another Spool,
// in this process or another, has the directory open.
var ErrLocked = errors.New("spool: directory in use")

// OSFS is the operating system's file system, the [FS] used when
// [Config].FS is nil.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile calls os.OpenFile.
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil File
	}
	return f, nil
}

// Remove calls os.Remove.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// ReadDir calls os.ReadDir.
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// MkdirAll calls os.MkdirAll.
func (OSFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// Lock takes an exclusive flock(2) on name (on systems without flock, it
// creates name exclusively and removes it on Close).
func (OSFS) Lock(name string) (io.Closer, error) { return lockFile(name) }

// syncDirFS fsyncs a directory of fsys, so that created, renamed and
// removed entries survive a power loss.
func syncDirFS(fsys FS, dir string) error {
	f, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
