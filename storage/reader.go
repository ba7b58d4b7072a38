package storage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// ListFiles returns the paths of the files a [Writer] with cfg writes (Dir,
// Layout, Location and Interval matter), oldest first: ordered by period,
// then by sequence number. The last one is the newest, the active file of
// a running Writer. A file being compressed is listed once, under its
// uncompressed name, until the original is removed.
func ListFiles(cfg Config) ([]string, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg}
	files, err := w.list()
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for i, f := range files {
		if i > 0 && files[i-1].base == f.base && files[i-1].seq == f.seq {
			continue // the compressed copy of the file before
		}
		paths = append(paths, filepath.Join(cfg.Dir, f.name))
	}
	return paths, nil
}

// OpenFile opens a file written by a [Writer] for reading, decompressing
// it when its name ends in ".gz" or ".zst". The caller closes it.
func OpenFile(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	switch filepath.Ext(path) {
	case ".gz":
		zr, err := gzip.NewReader(f)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("storage: %s: %w", path, err)
		}
		return &decompressed{Reader: zr, close: func() { _ = zr.Close() }, f: f}, nil
	case ".zst":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("storage: %s: %w", path, err)
		}
		return &decompressed{Reader: zr, close: zr.Close, f: f}, nil
	}
	return f, nil
}

type decompressed struct {
	io.Reader
	close func()
	f     *os.File
}

func (d *decompressed) Close() error {
	d.close()
	return d.f.Close()
}
