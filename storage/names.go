package storage

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tmpSuffix marks a compressed file being written; it is renamed to its
// final name only once complete and fsynced.
const tmpSuffix = ".tmp"

// fileInfo is one file of a Writer's directory that belongs to it.
type fileInfo struct {
	name    string // file name in Dir
	base    string // formatted period name
	period  time.Time
	seq     int
	ext     string // compression suffix, "" when uncompressed
	modTime time.Time
}

// parseName reports whether name is one of the Writer's files and returns
// its period, sequence number and compression suffix. Temporary files are
// not matched.
func (w *Writer) parseName(name string) (fileInfo, bool) {
	fi := fileInfo{name: name}
	rest := name
	for _, ext := range []string{".gz", ".zst"} {
		if s, ok := strings.CutSuffix(rest, ext); ok {
			rest, fi.ext = s, ext
			break
		}
	}
	if t, ok := w.parsePeriod(rest); ok {
		fi.base, fi.period = rest, t
		return fi, true
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || i+1 == len(rest) || rest[i+1] == '0' {
		return fi, false
	}
	seq, err := strconv.Atoi(rest[i+1:])
	if err != nil || seq <= 0 {
		return fi, false
	}
	t, ok := w.parsePeriod(rest[:i])
	if !ok {
		return fi, false
	}
	fi.base, fi.period, fi.seq = rest[:i], t, seq
	return fi, true
}

func (w *Writer) parsePeriod(s string) (time.Time, bool) {
	t, err := time.ParseInLocation(w.cfg.Layout, s, w.cfg.Location)
	if err != nil || t.Format(w.cfg.Layout) != s {
		return time.Time{}, false
	}
	return t, true
}

// list returns the Writer's files in Dir, oldest first: ordered by period,
// then sequence number.
func (w *Writer) list() ([]fileInfo, error) {
	entries, err := os.ReadDir(w.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", w.cfg.Dir, err)
	}
	var files []fileInfo
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, ok := w.parseName(e.Name())
		if !ok {
			continue
		}
		if info, err := e.Info(); err == nil {
			fi.modTime = info.ModTime()
		}
		files = append(files, fi)
	}
	slices.SortFunc(files, func(a, b fileInfo) int {
		if c := a.period.Compare(b.period); c != 0 {
			return c
		}
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.ext, b.ext)
	})
	return files, nil
}

// SanitizeFileName returns s made safe to use as one file name component:
// bytes other than ASCII letters, digits, '-', '_' and '.' become '_', a
// leading '.' becomes '_' (so neither "." nor ".." nor hidden files can
// result), and the result is cut to 128 bytes. An empty s gives "_".
// Use it for any part of a path derived from event data (index, host,
// source).
func SanitizeFileName(s string) string {
	if s == "" {
		return "_"
	}
	if len(s) > 128 {
		s = s[:128]
	}
	ok := s[0] != '.'
	for i := 0; ok && i < len(s); i++ {
		ok = safeByte(s[i])
	}
	if ok {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !safeByte(c) {
			b[i] = '_'
		}
	}
	if b[0] == '.' {
		b[0] = '_'
	}
	return string(b)
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}
