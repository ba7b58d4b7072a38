package forward_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// Indexed fields for a syslog event: by default every field and the
// facility and severity by name; HECConfig.Fields selects some, by key or
// prefix.
func ExampleHECConfig_fields() {
	var e relaykit.Event
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC).UnixNano()
	e.Host, e.Source, e.SourceType = []byte("vm"), []byte("myapp"), []byte("syslog")
	e.Raw = []byte("sd test")
	e.SetPriority(4, 3) // auth.err
	e.SetFieldString("msgid", "LOGIN")
	e.SetFieldString("sd.origin@32473.ip", "10.1.2.3")

	for _, fields := range [][]string{nil, {"sd.*", "severity"}} {
		h, err := forward.NewHEC(forward.HECConfig{URL: "https://splunk.example.com:8088", Token: "t", Fields: fields})
		if err != nil {
			panic(err)
		}
		b, _ := h.AppendEvent(nil, &e)
		fmt.Println(string(b))
		h.Close()
	}
	// Output:
	// {"time":1767323045.678,"host":"vm","source":"myapp","sourcetype":"syslog","event":"sd test","fields":{"msgid":"LOGIN","sd.origin@32473.ip":"10.1.2.3","facility":"auth","severity":"err"}}
	// {"time":1767323045.678,"host":"vm","source":"myapp","sourcetype":"syslog","event":"sd test","fields":{"sd.origin@32473.ip":"10.1.2.3","severity":"err"}}
}
