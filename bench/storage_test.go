package bench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
	"github.com/relaykit/relaykit/storage"
)

// bufioFile is the ceiling: a 256 KiB bufio.Writer on one os.File, with
// no rotation at all.
type bufioFile struct {
	f *os.File
	*bufio.Writer
}

func (b *bufioFile) Close() error {
	if err := b.Flush(); err != nil {
		return err
	}
	return b.f.Close()
}

// newLineWriter opens one implementation of a rotating line writer in dir.
// All rotate at 100 MiB (lumberjack counts MB of 2^20 bytes).
func newLineWriter(b *testing.B, impl, dir string) io.WriteCloser {
	b.Helper()
	switch impl {
	case "storage":
		w, err := storage.NewWriter(storage.Config{Dir: dir, MaxBytes: 100 << 20})
		if err != nil {
			b.Fatal(err)
		}
		return w
	case "lumberjack":
		return &lumberjack.Logger{Filename: filepath.Join(dir, "relay.log"), MaxSize: 100}
	case "bufio-file":
		f, err := os.Create(filepath.Join(dir, "relay.log"))
		if err != nil {
			b.Fatal(err)
		}
		return &bufioFile{f: f, Writer: bufio.NewWriterSize(f, 256<<10)}
	}
	b.Fatalf("unknown impl %s", impl)
	return nil
}

// dirBytes returns the total size of the files in dir, decompressing
// gzip files.
func dirBytes(b *testing.B, dir string) int64 {
	b.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if filepath.Ext(p) != ".gz" {
			info, err := e.Info()
			if err != nil {
				b.Fatal(err)
			}
			total += info.Size()
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, zr)
		if err != nil {
			b.Fatal(err)
		}
		total += n
		f.Close()
	}
	return total
}

// BenchmarkWrite measures one line written per op to a rotating file
// writer, against lumberjack (one write(2) per line) and a plain bufio +
// os.File (the ceiling).
func BenchmarkWrite(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100B", 100}, {"10KB", 10 << 10}} {
		line := append(bytes.Repeat([]byte("x"), size.n-1), '\n')
		for _, impl := range []string{"storage", "lumberjack", "bufio-file"} {
			b.Run("size="+size.name+"/impl="+impl, func(b *testing.B) {
				dir := b.TempDir()
				w := newLineWriter(b, impl, dir)
				b.ReportAllocs()
				b.SetBytes(int64(len(line)))
				var n int64
				for b.Loop() {
					if _, err := w.Write(line); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.StopTimer()
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				if got, want := dirBytes(b, dir), n*int64(len(line)); got != want {
					b.Fatalf("%s wrote %d bytes, want %d", impl, got, want)
				}
			})
		}
	}
}

type rotator interface {
	io.WriteCloser
	Rotate() error
}

// rotateWriterRate is the rate of the writer running during
// BenchmarkRotate, in bytes per second: a heavily loaded relay (a million
// 100-byte events per second), without filling the machine's disk.
const rotateWriterRate = 100 << 20

// BenchmarkRotate measures the time of one rotation (the stall a writer
// sees) while another goroutine writes 100-byte lines at 100 MB/s. With
// pace=none rotations run back to back; with pace=2ms the timer is stopped
// for 2 ms between rotations, as in real use where rotations are far apart
// and the background work of the previous one (creating the next file,
// fsync, compression) is done. With compress=gzip the compression runs in
// storage's background goroutine, off the write path.
func BenchmarkRotate(b *testing.B) {
	cases := []struct{ pace, compress, impl string }{
		{"none", "none", "storage"},
		{"none", "gzip", "storage"},
		{"none", "none", "lumberjack"},
		{"2ms", "none", "storage"},
		{"2ms", "gzip", "storage"},
		{"2ms", "none", "lumberjack"},
	}
	for _, c := range cases {
		b.Run("pace="+c.pace+"/compress="+c.compress+"/impl="+c.impl, func(b *testing.B) {
			dir := b.TempDir()
			var w rotator
			if c.impl == "storage" {
				cfg := storage.Config{Dir: dir, MaxBytes: -1}
				if c.compress == "gzip" {
					cfg.Compression = storage.CompressGzip
				}
				sw, err := storage.NewWriter(cfg)
				if err != nil {
					b.Fatal(err)
				}
				w = sw
			} else {
				w = &lumberjack.Logger{Filename: filepath.Join(dir, "relay.log"), MaxSize: 1 << 20}
			}
			line := append(bytes.Repeat([]byte("y"), 99), '\n')
			var stop atomic.Bool
			var written atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				start := time.Now()
				for !stop.Load() {
					for range 100 {
						if _, err := w.Write(line); err != nil {
							b.Error(err)
							return
						}
					}
					n := written.Add(100 * int64(len(line)))
					due := start.Add(time.Duration(n * int64(time.Second) / rotateWriterRate))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
			})
			for written.Load() == 0 {
				runtime.Gosched() // the writer is running before the first rotation
			}
			b.ReportAllocs()
			rotations := 0
			for b.Loop() {
				if c.pace == "2ms" {
					b.StopTimer()
					time.Sleep(2 * time.Millisecond)
					b.StartTimer()
				}
				if err := w.Rotate(); err != nil {
					b.Fatal(err)
				}
				rotations++
			}
			b.StopTimer()
			stop.Store(true)
			wg.Wait()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			// lumberjack names backups by the millisecond, so two rotations
			// within one millisecond share a name: only count storage's.
			if c.impl == "storage" && len(entries) != rotations+1 {
				b.Fatalf("%d files after %d rotations", len(entries), rotations)
			}
			got, want := dirBytes(b, dir), written.Load()
			switch {
			case got == want:
			case c.impl == "lumberjack":
				// Its backups overwrite each other when two rotations
				// fall in one millisecond: report the loss, not fail.
				b.ReportMetric(float64(want-got), "lost-bytes")
			default:
				b.Fatalf("files hold %d bytes, %d written", got, want)
			}
		})
	}
}

// BenchmarkSpoolAppend measures appending batches of 100 events with
// 100-byte messages to a spool with the default sync policy (page cache,
// no fsync). One op is one batch; MB/s counts the events' payload bytes.
func BenchmarkSpoolAppend(b *testing.B) {
	const batchSize = 100
	batch := make([]relaykit.Event, batchSize)
	payload := 0
	for i := range batch {
		e := &batch[i]
		e.ReceiveTime = 1763805600000000000 + int64(i)
		e.Host = []byte("web-01.example.net")
		e.Source = []byte("nginx")
		e.SourceType = []byte("syslog")
		e.Raw = bytes.Repeat([]byte("m"), 100)
		e.SetPriority(16, 6)
		payload += e.Size()
	}
	b.Run("batch=100/size=100B", func(b *testing.B) {
		s, err := spool.Open(spool.Config{Dir: b.TempDir(), MaxBytes: 64 << 30})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.ReportAllocs()
		b.SetBytes(int64(payload))
		n := 0
		for b.Loop() {
			batch[0].ReceiveTime = int64(n)
			if _, err := s.Append(batch); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.StopTimer()
		if st := s.Stats(); st.Appended != int64(n) {
			b.Fatalf("appended %d, want %d", st.Appended, n)
		}
		next := 0
		err = s.Replay(b.Context(), func(got []relaykit.Event) error {
			if len(got) != batchSize || got[0].ReceiveTime != int64(next) || len(got[0].Raw) != 100 {
				return fmt.Errorf("batch %d: got %d events, first %d", next, len(got), got[0].ReceiveTime)
			}
			next++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if next != n {
			b.Fatalf("replayed %d batches, appended %d", next, n)
		}
	})
}
