package relaykit_test

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit"
)

func Example() {
	// A Sink that prints what it receives; it copies nothing, so it needs
	// nothing once Send returns.
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			e := &batch[i]
			user, _ := e.Field("user")
			sev, _ := e.Severity()
			fmt.Printf("%s %s severity=%d user=%s: %s\n", e.Host, e.Source, sev, user, e.Raw)
		}
		return nil
	})

	batch := make([]relaykit.Event, 1)
	e := &batch[0]
	e.Host = append(e.Host, "web-1"...)
	e.Source = append(e.Source, "sshd"...)
	e.Raw = append(e.Raw, "Failed password for root"...)
	e.SetPriority(4, 6) // auth.info
	e.SetFieldString("user", "root")

	if err := sink.Send(context.Background(), batch); err != nil {
		fmt.Println(err)
	}

	// Reuse the event for the next record without allocating.
	e.Reset()
	e.Raw = append(e.Raw, "next"...)
	fmt.Println(len(e.Fields), string(e.Raw))
	// Output:
	// web-1 sshd severity=6 user=root: Failed password for root
	// 0 next
}
