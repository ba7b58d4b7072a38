package configtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

// Config tests (`relay test`): a test file holds cases, each an input and
// what must come out of the config's routes. The file format:
//
//	tests:
//	  - name: Fortinet deny reaches CommonSecurityLog, not Splunk
//	    input:
//	      kind: syslog          # syslog (RFC 5424/3164, CEF), hec, hec_raw, json; default syslog,
//	                            # or the kind of the input named below
//	      name: udp             # optional: the configured input whose settings apply
//	      source: 10.1.2.3      # optional: the sender's address (the host of a syslog line without one)
//	      token: apps           # hec: the token's name (default the input's first token)
//	      time: 2026-03-01T12:00:00Z  # optional receive time (default 2026-01-01T00:00:00Z, +1ms per event)
//	      line: "<134>..."      # one line (for hec: one request body, which may hold several events)
//	      lines: [...]          # or several, routed as one batch
//	    expect:                 # one block, or a list of them
//	      destinations: [sentinel-cef]   # exactly these receive an event; "none" or [] for none
//	      destination: sentinel-cef      # optional: the checks below look only at this destination's events
//	      count: 1              # optional: events received (by destination, else by all)
//	      event: 2              # optional: check only each destination's 2nd event (-1: its last)
//	      fields:               # every event received, after its route's pipeline
//	        act: deny                     # equal
//	        msg: {regex: "^denied"}       # matched
//	        user: {absent: true}          # absent (or null)
//	      sentinel:             # the row a Sentinel destination would send (every one that got it)
//	        DeviceVendor: Fortinet
//	        DestinationPort: 443          # numbers compare as their JSON text
//	      hec:                  # the HEC event a HEC destination would send
//	        sourcetype: cef
//	        fields.act: deny              # members of an object member by dotted name
//
// Routes run exactly as in the relay (the same route specs, steps and
// encoders); nothing is opened or sent. Reduction steps (suppress,
// aggregate) hold events: every case ends all their windows after its
// input, so their summaries arrive and can be checked, and each case starts
// with empty state.

// TestCase is one config test: an input and what must come out.
type TestCase struct {
	Name   string       `yaml:"name"`
	Input  TestInput    `yaml:"input"`
	Expect Expectations `yaml:"expect"`
	// File is the test file the case was read from, for reports.
	File string `yaml:"-"`
}

// TestInput is the input of a case; see the file format above.
type TestInput struct {
	Kind   string   `yaml:"kind"`
	Name   string   `yaml:"name"`
	Source string   `yaml:"source"`
	Token  string   `yaml:"token"`
	Time   string   `yaml:"time"`
	Line   string   `yaml:"line"`
	Lines  []string `yaml:"lines"`
}

// Expectations are a case's checks: one block, or a list of blocks (for
// different checks per destination).
type Expectations []Expectation

// Expectation is one block of checks; see the file format above.
type Expectation struct {
	Destinations *DestinationSet      `yaml:"destinations"`
	Destination  string               `yaml:"destination"`
	Count        *int                 `yaml:"count"`
	Event        int                  `yaml:"event"`
	Fields       map[string]WantValue `yaml:"fields"`
	Sentinel     map[string]WantValue `yaml:"sentinel"`
	HEC          map[string]WantValue `yaml:"hec"`
}

// DestinationSet is the destinations expected to receive a case's events:
// a list, or "none".
type DestinationSet []string

// WantValue is a condition on one value: a scalar (equal to its text),
// {equals: x}, {regex: re}, {absent: true}, or null (absent).
type WantValue struct{ pipelinetest.Want }

// UnmarshalYAML reads one block or a list of blocks.
func (e *Expectations) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var list []Expectation
		if err := n.Decode(&list); err != nil {
			return err
		}
		*e = list
		return nil
	}
	var one Expectation
	if err := n.Decode(&one); err != nil {
		return err
	}
	*e = Expectations{one}
	return nil
}

// UnmarshalYAML reads a list of destination names, or "none".
func (d *DestinationSet) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "none" {
			return fmt.Errorf("line %d: destinations: want a list of names or none, got %q", n.Line, n.Value)
		}
		*d = DestinationSet{}
		return nil
	}
	var names []string
	if err := n.Decode(&names); err != nil {
		return err
	}
	*d = append(DestinationSet{}, names...)
	return nil
}

// UnmarshalYAML reads a condition.
func (w *WantValue) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			w.Want = pipelinetest.Absent()
			return nil
		}
		w.Want = pipelinetest.Equal(n.Value)
		return nil
	case yaml.MappingNode:
		var m struct {
			Equals *string `yaml:"equals"`
			Regex  *string `yaml:"regex"`
			Absent bool    `yaml:"absent"`
		}
		if err := decodeStrict(n, &m); err != nil {
			return err
		}
		set := 0
		for _, ok := range []bool{m.Equals != nil, m.Regex != nil, m.Absent} {
			if ok {
				set++
			}
		}
		if set != 1 {
			return fmt.Errorf("line %d: want exactly one of equals, regex and absent: true", n.Line)
		}
		switch {
		case m.Equals != nil:
			w.Want = pipelinetest.Equal(*m.Equals)
		case m.Regex != nil:
			re, err := pipelinetest.Match(*m.Regex)
			if err != nil {
				return fmt.Errorf("line %d: %w", n.Line, err)
			}
			w.Want = re
		default:
			w.Want = pipelinetest.Absent()
		}
		return nil
	}
	return fmt.Errorf("line %d: want a value, or one of {equals: ...}, {regex: ...}, {absent: true}", n.Line)
}

// decodeStrict decodes n into v, refusing unknown keys.
func decodeStrict(n *yaml.Node, v any) error {
	out, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// LoadTests reads the test files at paths, in order. Unknown keys, a case
// without a name or input, and a duplicate name within a file are errors
// that name the file.
func LoadTests(paths ...string) ([]TestCase, error) {
	var all []TestCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		cases, err := ParseTests(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for i := range cases {
			cases[i].File = p
		}
		all = append(all, cases...)
	}
	return all, nil
}

// ParseTests reads the cases of one test file.
func ParseTests(data []byte) ([]TestCase, error) {
	var f struct {
		Tests []TestCase `yaml:"tests"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no tests")
		}
		return nil, err
	}
	if len(f.Tests) == 0 {
		return nil, errors.New("no tests")
	}
	seen := map[string]bool{}
	var errs []error
	for i, tc := range f.Tests {
		where := fmt.Sprintf("tests[%d]", i)
		switch {
		case strings.TrimSpace(tc.Name) == "":
			errs = append(errs, fmt.Errorf("%s: name is required", where))
		case seen[tc.Name]:
			errs = append(errs, fmt.Errorf("%s: duplicate name %q", where, tc.Name))
		}
		seen[tc.Name] = true
		if tc.Input.Line == "" && len(tc.Input.Lines) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s): input: line or lines is required", where, tc.Name))
		}
		if tc.Input.Line != "" && len(tc.Input.Lines) > 0 {
			errs = append(errs, fmt.Errorf("%s (%s): input: line and lines are exclusive", where, tc.Name))
		}
		if len(tc.Expect) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s): expect is required", where, tc.Name))
		}
	}
	return f.Tests, errors.Join(errs...)
}
