package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/storage"
)

// clock is a fake clock for Config.Now.
// dirFiles returns the names of the files in dir, sorted, and their
// contents (decompressed).
func dirFiles(t *testing.T, dir string) ([]string, map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	contents := map[string]string{}
	for _, e := range entries {
		names = append(names, e.Name())
		contents[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
	}
	slices.Sort(names)
	return names, contents
}

// readFile returns a file's content, decompressed by its extension.
func readFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var r io.Reader = f
	switch filepath.Ext(path) {
	case ".gz":
		zr, err := gzip.NewReader(f)
		require.NoError(t, err)
		r = zr
	case ".zst":
		zr, err := zstd.NewReader(f)
		require.NoError(t, err)
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(b)
}

func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	n, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.Equal(t, len(s), n)
}

func TestWriterRotatesAtMidnight(t *testing.T) {
	dir := t.TempDir()
	loc := time.FixedZone("CET", 3600)
	clk := clock.NewFake(time.Date(2026, 11, 21, 23, 59, 59, 0, loc))
	w, err := storage.NewWriter(storage.Config{Dir: dir, Location: loc, Clock: clk})
	require.NoError(t, err)
	write(t, w, "before\n")
	clk.Set(time.Date(2026, 11, 21, 23, 59, 59, 999999999, loc))
	write(t, w, "still before\n")
	clk.Set(time.Date(2026, 11, 22, 0, 0, 0, 0, loc))
	write(t, w, "after\n")
	assert.Equal(t, filepath.Join(dir, "relay-2026-11-22.log"), w.Path())
	require.NoError(t, w.Close())

	names, contents := dirFiles(t, dir)
	assert.Equal(t, []string{"relay-2026-11-21.log", "relay-2026-11-22.log"}, names)
	assert.Equal(t, "before\nstill before\n", contents["relay-2026-11-21.log"])
	assert.Equal(t, "after\n", contents["relay-2026-11-22.log"])
	assert.Equal(t, int64(1), w.Stats().Rotations)
}

func TestWriterRotatesAtSize(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	w, err := storage.NewWriter(storage.Config{Dir: dir, Location: time.UTC, Clock: clk, MaxBytes: 10})
	require.NoError(t, err)
	for range 5 {
		write(t, w, "abc\n") // 4 bytes: two fit in 10
	}
	write(t, w, "a record longer than MaxBytes\n")
	write(t, w, "end\n")
	require.NoError(t, w.Close())

	names, contents := dirFiles(t, dir)
	base := "relay-2026-11-22.log"
	assert.Equal(t, []string{base, base + ".1", base + ".2", base + ".3", base + ".4"}, names)
	assert.Equal(t, "abc\nabc\n", contents[base])
	assert.Equal(t, "abc\nabc\n", contents[base+".1"])
	assert.Equal(t, "abc\n", contents[base+".2"])
	assert.Equal(t, "a record longer than MaxBytes\n", contents[base+".3"])
	assert.Equal(t, "end\n", contents[base+".4"])
}

func TestWriterIntervalInLocation(t *testing.T) {
	dir := t.TempDir()
	// UTC+05:30: hourly periods start at hh:00 local, hh:30 UTC.
	loc := time.FixedZone("IST", 5*3600+1800)
	clk := clock.NewFake(time.Date(2026, 11, 22, 4, 29, 0, 0, time.UTC)) // 09:59 local
	w, err := storage.NewWriter(storage.Config{
		Dir: dir, Location: loc, Interval: time.Hour, Layout: "relay-2006-01-02T15.log", Clock: clk,
	})
	require.NoError(t, err)
	write(t, w, "09\n")
	clk.Set(time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)) // 10:00 local
	write(t, w, "10\n")
	clk.Add(59 * time.Minute)
	write(t, w, "10 again\n")
	clk.Set(time.Date(2026, 11, 22, 18, 31, 0, 0, time.UTC)) // 00:01 next day local
	write(t, w, "00\n")
	require.NoError(t, w.Close())

	names, contents := dirFiles(t, dir)
	assert.Equal(t, []string{"relay-2026-11-22T09.log", "relay-2026-11-22T10.log", "relay-2026-11-23T00.log"}, names)
	assert.Equal(t, "09\n", contents["relay-2026-11-22T09.log"])
	assert.Equal(t, "10\n10 again\n", contents["relay-2026-11-22T10.log"])
	assert.Equal(t, "00\n", contents["relay-2026-11-23T00.log"])
}

func TestWriterIntervalCoarserLayoutKeepsOrder(t *testing.T) {
	// A daily layout with 6-hour periods: later periods of the day continue
	// the sequence numbers, so names still sort in write order.
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC))
	w, err := storage.NewWriter(storage.Config{
		Dir: dir, Location: time.UTC, Interval: 6 * time.Hour, Clock: clk,
		FlushInterval: -1, // no idle rotation after the last period
	})
	require.NoError(t, err)
	for i := range 4 {
		write(t, w, fmt.Sprintf("p%d\n", i))
		clk.Add(6 * time.Hour)
	}
	require.NoError(t, w.Close())
	names, contents := dirFiles(t, dir)
	base := "relay-2026-11-22.log"
	assert.Equal(t, []string{base, base + ".1", base + ".2", base + ".3"}, names)
	assert.Equal(t, "p3\n", contents[base+".3"])
}

func TestWriterRestartAppends(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	cfg := storage.Config{Dir: dir, Location: time.UTC, Clock: clk, MaxBytes: 12}
	for _, line := range []string{"one\n", "two\n", "three\n"} {
		w, err := storage.NewWriter(cfg)
		require.NoError(t, err)
		write(t, w, line)
		require.NoError(t, w.Close())
	}
	names, contents := dirFiles(t, dir)
	assert.Equal(t, []string{"relay-2026-11-22.log", "relay-2026-11-22.log.1"}, names)
	assert.Equal(t, "one\ntwo\n", contents["relay-2026-11-22.log"])
	assert.Equal(t, "three\n", contents["relay-2026-11-22.log.1"])
}

func TestWriterRetention(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		maxFiles int
		maxAge   time.Duration
		want     []string
	}{
		{"count", 2, 0, []string{".3", ".4", ".5"}},
		{"age", 0, 90 * time.Minute, []string{".4", ".5"}},
		{"count and age", 1, 150 * time.Minute, []string{".4", ".5"}},
		{"keep all", 0, 0, []string{"", ".1", ".2", ".3", ".4", ".5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := clock.NewFake(start)
			cfg := storage.Config{Dir: dir, Location: time.UTC, Clock: clk}
			w, err := storage.NewWriter(cfg)
			require.NoError(t, err)
			for i := range 5 {
				write(t, w, fmt.Sprintf("file %d\n", i))
				require.NoError(t, w.Rotate())
			}
			write(t, w, "active\n")
			require.NoError(t, w.Close())
			// File i was last modified i hours after start.
			base := filepath.Join(dir, "relay-2026-11-22.log")
			for i, suffix := range []string{"", ".1", ".2", ".3", ".4", ".5"} {
				mt := start.Add(time.Duration(i) * time.Hour)
				if _, err := os.Stat(base + suffix); err == nil {
					require.NoError(t, os.Chtimes(base+suffix, mt, mt))
				}
			}
			// Reopen 5 hours later with retention: it runs at start.
			clk.Set(start.Add(5 * time.Hour))
			cfg.MaxFiles, cfg.MaxAge = tt.maxFiles, tt.maxAge
			w, err = storage.NewWriter(cfg)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			names, _ := dirFiles(t, dir)
			var want []string
			for _, s := range tt.want {
				want = append(want, "relay-2026-11-22.log"+s)
			}
			assert.Equal(t, want, names)
		})
	}
}

func TestWriterCompression(t *testing.T) {
	for _, c := range []storage.Compression{storage.CompressGzip, storage.CompressZstd} {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			clk := clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
			w, err := storage.NewWriter(storage.Config{Dir: dir, Location: time.UTC, Clock: clk, Compression: c})
			require.NoError(t, err)
			var want [3]strings.Builder
			for f := range 3 {
				for i := range 2000 {
					line := fmt.Sprintf("file %d line %d %s\n", f, i, strings.Repeat("x", i%50))
					want[f].WriteString(line)
					write(t, w, line)
				}
				if f < 2 {
					require.NoError(t, w.Rotate())
				}
			}
			require.NoError(t, w.Close()) // waits for the compressions
			ext := map[storage.Compression]string{storage.CompressGzip: ".gz", storage.CompressZstd: ".zst"}[c]
			base := "relay-2026-11-22.log"
			names, contents := dirFiles(t, dir)
			assert.Equal(t, []string{base + ".1" + ext, base + ".2", base + ext}, names)
			assert.Equal(t, want[0].String(), contents[base+ext])
			assert.Equal(t, want[1].String(), contents[base+".1"+ext])
			assert.Equal(t, want[2].String(), contents[base+".2"])
			assert.Equal(t, int64(2), w.Stats().Compressed)
		})
	}
}

func TestWriterCompressionRecoversAfterCrash(t *testing.T) {
	// A crash mid-compression leaves the original and a partial temporary
	// file; the next start removes the temporary file and compresses again.
	dir := t.TempDir()
	base := filepath.Join(dir, "relay-2026-11-21.log")
	require.NoError(t, os.WriteFile(base, []byte("yesterday\n"), 0o640))
	require.NoError(t, os.WriteFile(base+".gz.tmp", []byte("\x1f\x8b partial"), 0o640))
	clk := clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	w, err := storage.NewWriter(storage.Config{Dir: dir, Location: time.UTC, Clock: clk, Compression: storage.CompressGzip})
	require.NoError(t, err)
	write(t, w, "today\n")
	require.NoError(t, w.Close())
	names, contents := dirFiles(t, dir)
	assert.Equal(t, []string{"relay-2026-11-21.log.gz", "relay-2026-11-22.log"}, names)
	assert.Equal(t, "yesterday\n", contents["relay-2026-11-21.log.gz"])
}

func TestWriterConcurrentWholeLines(t *testing.T) {
	dir := t.TempDir()
	w, err := storage.NewWriter(storage.Config{Dir: dir, Location: time.UTC, MaxBytes: 4 << 10, BufferSize: 1000})
	require.NoError(t, err)
	const writers, lines = 4, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("g%d %06d %s\n", g, i, strings.Repeat("y", (g*7+i)%90))
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	assert.Positive(t, w.Stats().Rotations)

	names, contents := dirFiles(t, dir)
	next := make([]int, writers)
	for _, name := range orderedNames(names) {
		data := contents[name]
		require.True(t, strings.HasSuffix(data, "\n"), "file %s ends mid-line", name)
		assert.LessOrEqual(t, len(data), 4<<10, name)
		for line := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
			var g, i int
			var pad string
			_, err := fmt.Sscanf(line, "g%d %06d %s", &g, &i, &pad)
			if (g*7+i)%90 == 0 {
				_, err = fmt.Sscanf(line, "g%d %06d", &g, &i)
				pad = ""
			}
			require.NoError(t, err, "line %q", line)
			require.Equal(t, strings.Repeat("y", (g*7+i)%90), pad, "line %q", line)
			require.Equal(t, next[g], i, "writer %d out of order", g)
			next[g]++
		}
	}
	assert.Equal(t, []int{lines, lines, lines, lines}, next)
}

// orderedNames sorts names of one period by sequence number.
func orderedNames(names []string) []string {
	seq := func(n string) int {
		var s int
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			_, _ = fmt.Sscanf(n[i+1:], "%d", &s)
		}
		return s
	}
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int { return seq(a) - seq(b) })
	return out
}

func TestWriterCloseStopsGoroutines(t *testing.T) {
	dir := t.TempDir()
	w, err := storage.NewWriter(storage.Config{
		Dir: dir, Compression: storage.CompressZstd, FlushInterval: time.Millisecond, Sync: storage.SyncInterval,
	})
	require.NoError(t, err)
	write(t, w, "x\n")
	require.NoError(t, w.Rotate())
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "Close is idempotent")
	goleak.VerifyNone(t)
	_, err = w.Write([]byte("late\n"))
	assert.ErrorIs(t, err, storage.ErrClosed)
}

func TestWriterPermissions(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	tests := []struct {
		name string
		mode os.FileMode
		want os.FileMode
	}{
		{"default", 0, 0o640},
		{"private", 0o600, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b") // created
			w, err := storage.NewWriter(storage.Config{Dir: dir, FileMode: tt.mode, Compression: storage.CompressGzip})
			require.NoError(t, err)
			write(t, w, "x\n")
			require.NoError(t, w.Rotate())
			require.NoError(t, w.Close())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 2) // active + compressed
			for _, e := range entries {
				info, err := e.Info()
				require.NoError(t, err)
				assert.Equal(t, tt.want, info.Mode().Perm(), e.Name())
			}
			info, err := os.Stat(dir)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o750), info.Mode().Perm())
		})
	}
}

// TestWriterErrorsNotSticky: a write to a broken file fails alone; the
// next one goes to a new file, and nothing of the failed write is kept.
func TestWriterErrorsNotSticky(t *testing.T) {
	dir := t.TempDir()
	w, err := storage.NewWriter(storage.Config{Dir: dir, BufferSize: -1})
	require.NoError(t, err)
	write(t, w, "ok\n")
	first := w.Path()
	w.BreakFile()
	_, err = w.Write([]byte("fails\n"))
	require.Error(t, err)
	write(t, w, "next\n")
	assert.NotEqual(t, first, w.Path(), "a new file after the broken one")
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
	assert.Equal(t, "ok\n", readFile(t, first))
	assert.Equal(t, "next\n", readFile(t, w.Path()))
	assert.Equal(t, int64(1), w.Stats().WriteErrors)
}

// TestWriterDiskFull runs the writer on a real 256 KiB tmpfs: a write that
// does not fit fails with ENOSPC and leaves no partial line; after space
// is freed, writing goes on in the same file.
func TestWriterDiskFull(t *testing.T) {
	dir := testtool.Tmpfs(t, "256k")
	w, err := storage.NewWriter(storage.Config{Dir: dir, BufferSize: -1})
	require.NoError(t, err)
	defer w.Close()
	line := bytes.Repeat([]byte("x"), 999)
	line = append(line, '\n')
	var n int
	var werr error
	for {
		if _, werr = w.Write(line); werr != nil {
			break
		}
		n++
	}
	require.ErrorIs(t, werr, syscall.ENOSPC)
	path := w.Path()
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(n*len(line)), info.Size(), "no partial line")
	require.NoError(t, os.WriteFile(path, nil, 0o640)) // make room (as retention would)
	write(t, w, "after\n")
	assert.Equal(t, path, w.Path(), "same file: a full disk is not a broken file")
	assert.Equal(t, "after\n", readFile(t, path))
}

func TestWriterConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  storage.Config
	}{
		{"no dir", storage.Config{}},
		{"parent in layout", storage.Config{Layout: "../relay-2006-01-02.log"}},
		{"separator in layout", storage.Config{Layout: "2006/relay-01-02.log"}},
		{"layout without time", storage.Config{Layout: "relay.log"}},
		{"unsafe characters", storage.Config{Layout: "relay 2006-01-02.log"}},
		{"hidden file", storage.Config{Layout: ".relay-2006-01-02"}},
		{"interval too short", storage.Config{Interval: time.Millisecond}},
		{"interval too long", storage.Config{Interval: 48 * time.Hour}},
		{"negative size", storage.Config{MaxBytes: -2}},
		{"bad mode", storage.Config{FileMode: os.ModeDir | 0o600}},
		{"bad compression", storage.Config{Compression: 7}},
		{"sync interval without flushes", storage.Config{Sync: storage.SyncInterval, FlushInterval: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != "no dir" {
				tt.cfg.Dir = t.TempDir()
			}
			w, err := storage.NewWriter(tt.cfg)
			assert.ErrorIs(t, err, storage.ErrInvalidConfig)
			assert.Nil(t, w)
		})
	}
}

func TestSanitizeFileName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"main", "main"},
		{"", "_"},
		{"..", "_."},
		{".", "_"},
		{"../../etc/passwd", "_._.._etc_passwd"},
		{"a/b\\c", "a_b_c"},
		{"idx\x00nul", "idx_nul"},
		{"ünïcode", "__n__code"},
		{strings.Repeat("a", 300), strings.Repeat("a", 128)},
	}
	for _, tt := range tests {
		got := storage.SanitizeFileName(tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
		assert.NotContains(t, got, "/")
		assert.Equal(t, filepath.Base(got), got)
	}
}

func TestWriterFlushInterval(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		w, err := storage.NewWriter(storage.Config{Dir: dir, Location: time.UTC, Clock: clock.New(0), FlushInterval: time.Second})
		require.NoError(t, err)
		write(t, w, "buffered\n")
		assert.Empty(t, readFile(t, w.Path()), "data stays in the buffer before the interval")
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, "buffered\n", readFile(t, w.Path()))
		require.NoError(t, w.Close())
	})
}

func TestWriterIdleRotationOnTick(t *testing.T) {
	// A file whose period ended is rotated (and compressed) by the timed
	// flush even if no further write comes.
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().UTC()
		w, err := storage.NewWriter(storage.Config{
			Dir: dir, Location: time.UTC, Interval: time.Hour, Layout: "r-2006-01-02T15.log",
			Clock: clock.New(0), Compression: storage.CompressGzip,
		})
		require.NoError(t, err)
		write(t, w, "last line of the hour\n")
		first := w.Path()
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		assert.NotEqual(t, first, w.Path())
		require.NoError(t, w.Close())
		assert.Equal(t, "last line of the hour\n", readFile(t, first+".gz"))
		assert.Equal(t, start.Truncate(time.Hour).Format("r-2006-01-02T15.log"), filepath.Base(first))
	})
}

func TestWriterWriteAfterError(t *testing.T) {
	// Rotate into a directory that vanished: every write fails until it is
	// back.
	dir := filepath.Join(t.TempDir(), "logs")
	w, err := storage.NewWriter(storage.Config{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, os.Rename(dir, dir+".moved"))
	rerr := w.Rotate()
	require.Error(t, rerr)
	_, werr := w.Write([]byte("x"))
	assert.True(t, errors.Is(werr, os.ErrNotExist), "%v", werr)
	assert.True(t, bytes.Contains([]byte(werr.Error()), []byte("storage: open")), werr.Error())
	require.NoError(t, os.Rename(dir+".moved", dir))
	write(t, w, "back\n")
	require.NoError(t, w.Close())
	assert.Equal(t, "back\n", readFile(t, w.Path()))
}

func TestListAndOpenFiles(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	for _, c := range []storage.Compression{storage.CompressGzip, storage.CompressZstd, storage.CompressNone} {
		cfg := storage.Config{Dir: dir, Location: time.UTC, Clock: clk, Compression: c}
		w, err := storage.NewWriter(cfg)
		require.NoError(t, err)
		for i := range 11 {
			write(t, w, fmt.Sprintf("%s %d\n", c, i))
			require.NoError(t, w.Rotate())
		}
		require.NoError(t, w.Close())
		clk.Add(24 * time.Hour)
	}
	// Unrelated and temporary files are not listed.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "relay-2026-11-25.log.gz.tmp"), nil, 0o600))

	paths, err := storage.ListFiles(storage.Config{Dir: dir, Location: time.UTC})
	require.NoError(t, err)
	var all strings.Builder
	for _, p := range paths {
		r, err := storage.OpenFile(p)
		require.NoError(t, err)
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		all.Write(b)
	}
	var want strings.Builder
	for _, c := range []string{"gzip", "zstd", "none"} {
		for i := range 11 {
			fmt.Fprintf(&want, "%s %d\n", c, i)
		}
	}
	assert.Equal(t, want.String(), all.String(), "files in write order (.10 after .9)")
	assert.Equal(t, "relay-2026-11-22.log.gz", filepath.Base(paths[0]))
	assert.Equal(t, "relay-2026-11-24.log.11", filepath.Base(paths[len(paths)-1]))
}
