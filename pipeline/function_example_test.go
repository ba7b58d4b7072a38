package pipeline_test

import (
	"bytes"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// A step of your own is a Func (or any Function): it changes the event in
// place and returns false to drop it. It may run on several goroutines at
// once, each with its own event, and must not keep the event.
func ExampleFunc() {
	// Drop health-check noise, tag the rest with the message length.
	noise := []byte("GET /healthz")
	step := pipeline.Func(func(e *relaykit.Event) (bool, error) {
		if bytes.Contains(e.Raw, noise) {
			return false, nil
		}
		e.SetField("len", fmt.Append(nil, len(e.Raw)))
		return true, nil
	})
	p := pipeline.NewPipeline(step, pipeline.Set("team", "web"))

	for _, raw := range []string{`10.0.0.1 "GET /healthz HTTP/1.1" 200`, `10.0.0.2 "POST /login HTTP/1.1" 401`} {
		e := relaykit.Event{Raw: []byte(raw)}
		keep, err := p.Run(&e)
		if err != nil {
			panic(err)
		}
		if !keep {
			fmt.Println("dropped:", raw)
			continue
		}
		n, _ := e.Field("len")
		team, _ := e.Field("team")
		fmt.Printf("kept: len=%s team=%s\n", n, team)
	}
	// Output:
	// dropped: 10.0.0.1 "GET /healthz HTTP/1.1" 200
	// kept: len=35 team=web
}

// A Filter can be used on its own: it is compiled once per distinct pattern
// and shared, and a literal the pattern requires is searched for before the
// regular expression runs, so most non-matching lines cost a byte search.
func ExampleCompileFilter() {
	f, err := pipeline.CompileFilter(`\b(?:DENY|DROP)\b`)
	if err != nil {
		panic(err)
	}
	again, _ := pipeline.CompileFilter(`\b(?:DENY|DROP)\b`)
	fmt.Println("same filter:", f == again)
	for _, line := range []string{
		"fw: DENY tcp 192.0.2.1:443 -> 10.0.0.5:51000",
		"fw: DENYING nothing", // the literal is there, the word boundary is not
		"kernel: eth0 link up",
	} {
		fmt.Println(f.Match([]byte(line)), line)
	}
	_, err = pipeline.CompileFilter(`(unclosed`)
	fmt.Println(err != nil)
	// Output:
	// same filter: true
	// true fw: DENY tcp 192.0.2.1:443 -> 10.0.0.5:51000
	// false fw: DENYING nothing
	// false kernel: eth0 link up
	// true
}
