package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// compressor holds the reusable encoders of the mill goroutine.
type compressor struct {
	gz  *gzip.Writer
	zst *zstd.Encoder
	buf []byte
}

// enqueue hands a rotated file to the mill goroutine. It never blocks.
func (w *Writer) enqueue(path string) {
	w.millMu.Lock()
	w.jobs = append(w.jobs, path)
	w.millMu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// mill is the one background goroutine that fsyncs, compresses and
// removes rotated files. On stop it finishes the queued files first.
func (w *Writer) mill() {
	defer w.wg.Done()
	defer w.compact.close()
	w.startup()
	for {
		select {
		case <-w.notify:
			w.drainJobs()
		case <-w.stop:
			w.drainJobs()
			return
		}
	}
}

func (w *Writer) drainJobs() {
	for {
		w.millMu.Lock()
		jobs := w.jobs
		w.jobs = nil
		w.millMu.Unlock()
		if len(jobs) == 0 {
			return
		}
		for _, p := range jobs {
			w.process(p, true)
		}
		w.retain()
	}
}

// startup cleans up after a previous run: temporary files of an
// interrupted compression are removed (the original still exists, since
// it is removed only after the rename), rotated files left uncompressed are
// compressed, and retention is applied.
func (w *Writer) startup() {
	entries, err := os.ReadDir(w.cfg.Dir)
	if err != nil {
		w.bgError(fmt.Errorf("storage: list %s: %w", w.cfg.Dir, err))
		return
	}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), tmpSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if fi, ok := w.parseName(base); ok && fi.ext != "" {
			if err := os.Remove(filepath.Join(w.cfg.Dir, e.Name())); err != nil {
				w.bgError(fmt.Errorf("storage: remove temporary file: %w", err))
			}
		}
	}
	for _, p := range w.leftover {
		w.process(p, false)
	}
	w.leftover = nil
	w.retain()
}

// process fsyncs (per policy) and compresses one rotated file.
func (w *Writer) process(path string, fresh bool) {
	if fresh && w.cfg.Sync != SyncNone {
		if err := syncFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.bgError(fmt.Errorf("storage: sync %s: %w", path, err))
		}
	}
	if w.cfg.Compression == CompressNone {
		return
	}
	if err := w.compressFile(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return // removed by retention meanwhile
		}
		w.bgError(err)
		return
	}
	w.compressed.Add(1)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// compressFile writes path+ext through a temporary name: compress into
// path+ext+".tmp", fsync it, give it the original's modification time,
// rename it, fsync the directory, and only then remove the original. A
// crash at any point leaves the original, or a complete compressed file.
func (w *Writer) compressFile(path string) (err error) {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("storage: compress %s: %w", path, err)
	}
	final := path + w.cfg.Compression.ext()
	tmp := final + tmpSuffix
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, w.cfg.FileMode)
	if err != nil {
		return fmt.Errorf("storage: compress %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = dst.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = w.compact.copy(w.cfg.Compression, dst, src); err != nil {
		return fmt.Errorf("storage: compress %s: %w", path, err)
	}
	if err = dst.Sync(); err != nil {
		return fmt.Errorf("storage: compress %s: sync: %w", path, err)
	}
	if err = dst.Close(); err != nil {
		return fmt.Errorf("storage: compress %s: close: %w", path, err)
	}
	if err = os.Chtimes(tmp, info.ModTime(), info.ModTime()); err != nil {
		return fmt.Errorf("storage: compress %s: %w", path, err)
	}
	if err = os.Rename(tmp, final); err != nil {
		return fmt.Errorf("storage: compress %s: %w", path, err)
	}
	if err := syncDir(w.cfg.Dir); err != nil {
		w.bgError(fmt.Errorf("storage: sync directory: %w", err))
	}
	if err := os.Remove(path); err != nil {
		w.bgError(fmt.Errorf("storage: remove compressed original: %w", err))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *compressor) copy(kind Compression, dst io.Writer, src io.Reader) error {
	if c.buf == nil {
		c.buf = make([]byte, 256<<10)
	}
	var zw io.WriteCloser
	switch kind {
	case CompressGzip:
		if c.gz == nil {
			c.gz = gzip.NewWriter(dst)
		} else {
			c.gz.Reset(dst)
		}
		zw = c.gz
	case CompressZstd:
		if c.zst == nil {
			enc, err := zstd.NewWriter(dst, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return err
			}
			c.zst = enc
		} else {
			c.zst.Reset(dst)
		}
		zw = c.zst
	default:
		return fmt.Errorf("unknown %v", kind)
	}
	if _, err := io.CopyBuffer(zw, src, c.buf); err != nil {
		return err
	}
	return zw.Close()
}

func (c *compressor) close() {
	if c.zst != nil {
		_ = c.zst.Close()
	}
}

// retain removes rotated files beyond MaxFiles and older than MaxAge. The
// active file is never removed; a file and its compressed form count once.
func (w *Writer) retain() {
	if w.cfg.MaxFiles == 0 && w.cfg.MaxAge == 0 {
		return
	}
	files, err := w.list()
	if err != nil {
		w.bgError(err)
		return
	}
	active := filepath.Base(w.Path())
	rotated := files[:0]
	for _, f := range files {
		if f.name != active {
			rotated = append(rotated, f)
		}
	}
	// Group the two forms of one file (x and x.gz while compressing).
	type key struct {
		base string
		seq  int
	}
	var order []key
	groups := map[key][]fileInfo{}
	for _, f := range rotated {
		k := key{f.base, f.seq}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	var cutoff time.Time
	if w.cfg.MaxAge > 0 {
		cutoff = time.Unix(0, w.clock.Nano()).Add(-w.cfg.MaxAge)
	}
	for i, k := range order {
		drop := w.cfg.MaxFiles > 0 && len(order)-i > w.cfg.MaxFiles
		for _, f := range groups[k] {
			if drop || (!cutoff.IsZero() && f.modTime.Before(cutoff)) {
				if err := os.Remove(filepath.Join(w.cfg.Dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					w.bgError(fmt.Errorf("storage: retention: %w", err))
					continue
				}
				w.removed.Add(1)
			}
		}
	}
}
