package storage_test

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/storage"
)

// Reading back what a Writer wrote, oldest first, compressed or not: the
// same Config gives ListFiles the names, and OpenFile decompresses. The
// lines come back in the order they were written, across rotations.
func ExampleListFiles() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	cfg := storage.Config{
		Dir:         dir,
		Location:    time.UTC,
		Compression: storage.CompressGzip,
		Clock:       clock.NewFake(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
	}
	w, err := storage.NewWriter(cfg)
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		fmt.Fprintf(w, "line %d\n", i)
		if err := w.Rotate(); err != nil { // a new file of the same day: .1, .2, ...
			panic(err)
		}
	}
	fmt.Fprintln(w, "line 3")
	if err := w.Close(); err != nil { // waits for the compression of rotated files
		panic(err)
	}

	files, err := storage.ListFiles(cfg)
	if err != nil {
		panic(err)
	}
	for _, path := range files {
		r, err := storage.OpenFile(path)
		if err != nil {
			panic(err)
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fmt.Printf("%s: %s\n", path[len(dir)+1:], sc.Text())
		}
		_ = r.Close()
	}
	// Output:
	// relay-2026-11-22.log.gz: line 0
	// relay-2026-11-22.log.1.gz: line 1
	// relay-2026-11-22.log.2.gz: line 2
	// relay-2026-11-22.log.3: line 3
}
