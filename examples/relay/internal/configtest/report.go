package configtest

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for a terminal: each failed case with its
// failures (expected against got, per field, column or member) and its
// notes, each passed case too when verbose, and a last line: PASS or FAIL
// with the counts.
func (r Report) WriteText(w io.Writer, verbose bool) error {
	var b strings.Builder
	for _, c := range r.Cases {
		where := ""
		if c.File != "" {
			where = " (" + c.File + ")"
		}
		if c.Passed() {
			if verbose {
				fmt.Fprintf(&b, "--- PASS: %s%s\n", c.Name, where)
			}
			continue
		}
		fmt.Fprintf(&b, "--- FAIL: %s%s\n", c.Name, where)
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(f, "\n", "\n  "))
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	if n := r.Failed(); n > 0 {
		fmt.Fprintf(&b, "FAIL: %d of %d cases failed\n", n, len(r.Cases))
	} else {
		fmt.Fprintf(&b, "PASS: %d cases\n", len(r.Cases))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JUnit XML, the shape CI systems read (GitLab, Jenkins, GitHub actions'
// test reporters): one testsuite per test file.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a testsuite per test file, a
// testcase per case, a failure with every failed check and the notes.
func (r Report) WriteJUnit(w io.Writer) error {
	out := junitSuites{Name: "relay test", Tests: len(r.Cases), Failures: r.Failed()}
	index := map[string]int{}
	for _, c := range r.Cases {
		i, ok := index[c.File]
		if !ok {
			i = len(out.Suites)
			index[c.File] = i
			out.Suites = append(out.Suites, junitSuite{Name: c.File})
		}
		s := &out.Suites[i]
		jc := junitCase{Name: c.Name, Classname: c.File, Time: fmt.Sprintf("%.3f", c.Took.Seconds())}
		if !c.Passed() {
			text := strings.Join(c.Failures, "\n")
			for _, n := range c.Notes {
				text += "\nnote: " + n
			}
			first, _, _ := strings.Cut(c.Failures[0], "\n")
			jc.Failure = &junitFailure{Message: first, Type: "expectation", Text: text}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, jc)
	}
	for i := range out.Suites {
		var t float64
		for _, c := range r.Cases {
			if c.File == out.Suites[i].Name {
				t += c.Took.Seconds()
			}
		}
		out.Suites[i].Time = fmt.Sprintf("%.3f", t)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
