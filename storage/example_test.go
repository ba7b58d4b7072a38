package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/spool"
	"github.com/relaykit/relaykit/storage"
)

// A Writer rotating daily and at 1 MiB, keeping a week of gzipped files.
func ExampleNewWriter() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	clk := clock.NewFake(time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)) // a settable clock for the example
	w, err := storage.NewWriter(storage.Config{
		Dir:         dir,
		Location:    time.UTC,
		MaxBytes:    1 << 20,
		MaxAge:      7 * 24 * time.Hour,
		Compression: storage.CompressGzip,
		Clock:       clk,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintln(w, "last line of the day")
	clk.Add(time.Minute) // midnight
	fmt.Fprintln(w, "first line of the next day")
	if err := w.Close(); err != nil { // compresses the rotated file
		fmt.Println(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// relay-2026-11-22.log.gz
	// relay-2026-11-23.log
}

// An archive sink writing events as JSON lines.
func ExampleNewArchive() {
	dir, _ := os.MkdirTemp("", "archive")
	defer os.RemoveAll(dir)
	a, err := storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: dir, Layout: "archive-2006-01-02.json"},
		Format: storage.FormatJSON,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var e relaykit.Event
	e.Time = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano()
	e.Host = []byte("web-1")
	e.Raw = []byte(`GET /index.html "200"`)
	e.SetFieldString("status", "200")
	if err := a.Send(context.Background(), []relaykit.Event{e}); err != nil {
		fmt.Println(err)
	}
	path := a.Writer().Path()
	_ = a.Close()
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// {"time":"2026-11-22T10:00:00Z","host":"web-1","message":"GET /index.html \"200\"","fields":{"status":"200"}}
}

// A spool keeps failed batches and replays them in order once the
// destination is back.
func ExampleSpool_Replay() {
	dir, _ := os.MkdirTemp("", "spool")
	defer os.RemoveAll(dir)
	s, err := spool.Open(spool.Config{Dir: filepath.Join(dir, "hec")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, msg := range []string{"first", "second"} {
		batch := []relaykit.Event{{Raw: []byte(msg)}}
		if _, err := s.Append(batch); err != nil { // spool.ErrFull when full
			fmt.Println(err)
		}
	}
	err = s.Replay(context.Background(), func(batch []relaykit.Event) error {
		// Send the batch; an error keeps it (and the rest) for next time.
		fmt.Printf("replay %d event(s): %s\n", len(batch), batch[0].Raw)
		return nil
	})
	fmt.Println(err, s.Stats().Acked)
	// Output:
	// replay 1 event(s): first
	// replay 1 event(s): second
	// <nil> 2
}

// A write-ahead log: append each batch before sending it from memory, and
// acknowledge the record once the destination took the batch. Nothing is
// read back unless the process restarts with records still unacknowledged.
func ExampleSpool_Ack() {
	dir, _ := os.MkdirTemp("", "spool")
	defer os.RemoveAll(dir)
	cfg := spool.Config{Dir: filepath.Join(dir, "hec")}
	s, _ := spool.Open(cfg)
	send := func(batch []relaykit.Event) error { return nil } // the destination
	for _, msg := range []string{"delivered", "in flight at the crash"} {
		batch := []relaykit.Event{{Raw: []byte(msg)}}
		id, err := s.Append(batch)
		if err != nil {
			fmt.Println(err)
			continue
		}
		if msg == "delivered" && send(batch) == nil {
			_ = s.Ack(id)
		}
	}
	_ = s.Close() // as a crash would leave it

	s, _ = spool.Open(cfg)
	defer s.Close()
	rec, err := s.Peek()
	fmt.Printf("%s %v\n", rec.Events[0].Raw, err)
	_ = s.Ack(rec.ID)
	_, err = s.Peek()
	fmt.Println(err)
	// Output:
	// in flight at the crash <nil>
	// EOF
}

func ExampleSanitizeFileName() {
	fmt.Println(storage.SanitizeFileName("../../etc/passwd"))
	fmt.Println(storage.SanitizeFileName("main index"))
	// Output:
	// _._.._etc_passwd
	// main_index
}
