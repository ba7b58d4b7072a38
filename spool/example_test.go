package spool_test

import (
	"context"
	"fmt"
	"os"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// A spool outlives the process that wrote it: batches appended and not
// acknowledged are read back, oldest first, after a restart.
func Example() {
	dir, err := os.MkdirTemp("", "spool")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// The first process appends two batches and stops before delivering.
	sp, err := spool.Open(spool.Config{Dir: dir})
	if err != nil {
		panic(err)
	}
	for _, msg := range []string{"first", "second"} {
		if _, err := sp.Append([]relaykit.Event{{Raw: []byte(msg), Host: []byte("web-1")}}); err != nil {
			panic(err)
		}
	}
	sp.Close()

	// The next one opens the same directory and delivers the backlog: a
	// batch is acknowledged once fn returns nil.
	sp, err = spool.Open(spool.Config{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	err = sp.Replay(context.Background(), func(batch []relaykit.Event) error {
		for _, ev := range batch {
			fmt.Printf("%s %s\n", ev.Host, ev.Raw) // valid until fn returns
		}
		return nil
	})
	fmt.Println(err, sp.Stats().Events)
	// Output:
	// web-1 first
	// web-1 second
	// <nil> 0
}
