package relaykit_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/relaykit/relaykit"
)

// A Sink must not keep the batch after Send returns: the caller reuses the
// events. One that needs an event later copies it, here into a buffer of
// its own that CopyTo reuses, so keeping the latest event per host does not
// allocate once warm.
func ExampleEvent_CopyTo() {
	var (
		mu     sync.Mutex
		latest = map[string]*relaykit.Event{}
	)
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		mu.Lock()
		defer mu.Unlock()
		for i := range batch {
			keep, ok := latest[string(batch[i].Host)]
			if !ok {
				keep = new(relaykit.Event)
				latest[string(batch[i].Host)] = keep
			}
			batch[i].CopyTo(keep)
		}
		return nil
	})

	batch := make([]relaykit.Event, 1)
	for _, msg := range []string{"first", "second"} {
		batch[0].Reset() // the caller refills the same event...
		batch[0].Host = append(batch[0].Host, "web-1"...)
		batch[0].Raw = append(batch[0].Raw, msg...)
		_ = sink.Send(context.Background(), batch)
	}
	batch[0].Raw[0] = 'X' // ...and may overwrite it after Send

	fmt.Printf("%s\n", latest["web-1"].Raw)
	// Output:
	// second
}

// Fields are an ordered list of key/value pairs owned by the event. Set
// replaces in place, Rename keeps the position, and values returned by Field
// are valid until the field changes or the event is reset.
func ExampleEvent_SetField() {
	var e relaykit.Event
	e.SetFieldString("user", "alice")
	e.SetFieldString("action", "login")
	e.SetFieldString("user", "bob") // replaces alice, keeps the position
	e.RenameField("action", "event.action")
	e.DeleteField("missing") // false: nothing to delete

	for _, f := range e.Fields {
		fmt.Printf("%s=%s\n", f.Key, f.Value)
	}
	v, ok := e.Field("user")
	fmt.Println(string(v), ok)
	// Output:
	// user=bob
	// event.action=login
	// bob true
}
