package deadletter_test

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/storage/deadletter"
)

func Example() {
	var file bytes.Buffer // a storage.Writer with BufferSize -1, in a relay
	w, err := deadletter.NewWriter(deadletter.Config{Writer: &file, Clock: clock.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))})
	if err != nil {
		panic(err)
	}
	_ = w.Write(deadletter.Record{Input: "json", Peer: "10.0.0.5:51234", Reason: "invalid_json", Line: []byte("{\"a\":\x00")})
	_ = w.Write(deadletter.Record{Input: "json", Peer: "10.0.0.5:51234", Reason: "invalid_json", Line: []byte("caf\xe9")})
	os.Stdout.Write(file.Bytes())

	for _, line := range bytes.SplitAfter(file.Bytes(), []byte("\n"))[:2] {
		r, _ := deadletter.Parse(line)
		fmt.Printf("%q\n", r.Line)
	}
	// Output:
	// {"time":"2026-11-28T12:00:00Z","input":"json","peer":"10.0.0.5:51234","reason":"invalid_json","line":"{\"a\":\u0000"}
	// {"time":"2026-11-28T12:00:00Z","input":"json","peer":"10.0.0.5:51234","reason":"invalid_json","line_base64":"Y2Fm6Q=="}
	// "{\"a\":\x00"
	// "caf\xe9"
}
