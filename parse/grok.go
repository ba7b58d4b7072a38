package parse

import (
	"fmt"
	"regexp"
	"strings"

	grok "github.com/elastic/go-grok"
	"github.com/elastic/go-grok/patterns"
)

// GrokConfig configures [NewGrok].
type GrokConfig struct {
	// Field names the value to match, as in [KVConfig.Field]; "" is the
	// raw message.
	Field string
	// Pattern is a grok expression: a Go regular expression in which
	// %{SYNTAX} stands for a named sub-pattern and %{SYNTAX:name} (or
	// %{SYNTAX:name:type}) captures it as the field name. Names may hold
	// dots ("source.ip"). The type suffix is accepted and ignored: fields
	// hold text; convert them with [NewConvert]. Required.
	Pattern string
	// Patterns adds sub-pattern definitions, or replaces library ones of
	// the same name. The library is go-grok's complete set: its defaults
	// (IP, NUMBER, SYSLOGTIMESTAMP, ...) and its AWS, Bind9, Bro, Exim,
	// HAProxy, httpd, firewalls (Cisco ASA, NetScreen, ...), Java, Junos,
	// Maven, MCollective, MongoDB, PostgreSQL, Rails, Redis, Ruby, Squid
	// and syslog patterns.
	Patterns map[string]string
	// Prefix is prepended to every name stored. Empty means none.
	Prefix string
	// CaptureUnnamed makes %{SYNTAX} without a name capture too, as the
	// field SYNTAX (Logstash's named_captures_only: false). By default
	// only named sub-patterns are captured.
	CaptureUnnamed bool
}

// Grok is the step [NewGrok] returns: a [Regex] step over the expanded
// expression, named "parse_grok".
type Grok = Regex

// NewGrok returns a step named "parse_grok" that matches a grok expression
// against a value and stores its captures as fields: Prefix+name, set to
// the captured text. As in go-grok (github.com/elastic/go-grok, whose
// pattern library and expansion rules this step uses), a capture with empty
// text sets nothing, and when several captures share a name the rightmost
// with text wins. A field that existed before the step ran is replaced in
// place. A value that does not match is left alone and reported as
// ErrNoMatch.
//
// The expression is expanded once, here, exactly as go-grok expands it,
// and compiled with package regexp; matching then runs on the event's
// bytes and costs one allocation (the submatch indexes) where go-grok's
// Parse copies the text to a string and builds a map of copies per call
// (BenchmarkParse). The literal prefilter of [NewRegex] applies.
//
// It returns an error wrapping [ErrInvalidConfig] when go-grok rejects
// the expression (an unknown sub-pattern, a name with ':') or the
// expansion does not compile or captures nothing.
func NewGrok(cfg GrokConfig) (*Grok, error) {
	bad := func(err error) (*Grok, error) {
		return nil, fmt.Errorf("%w: parse_grok: %w", ErrInvalidConfig, err)
	}
	// go-grok validates the expression; its compiled form is not
	// exported, so the step expands it again below, the same way.
	g, err := grok.NewComplete(cfg.Patterns)
	if err != nil {
		return bad(err)
	}
	if err := g.Compile(cfg.Pattern, !cfg.CaptureUnnamed); err != nil {
		return bad(err)
	}
	expanded, err := grokExpand(cfg.Pattern, grokLibrary(cfg.Patterns), !cfg.CaptureUnnamed)
	if err != nil {
		return bad(err)
	}
	re, err := regexp.Compile(expanded)
	if err != nil {
		return bad(err)
	}
	r, err := newRegex("parse_grok", cfg.Field, cfg.Prefix, expanded, re, func(name string) string {
		return strings.ReplaceAll(name, grokDotSep, ".")
	})
	if err != nil {
		return bad(err)
	}
	r.grok = true
	return r, nil
}

// grokLibraries are the pattern sets go-grok's NewComplete adds on top of
// its defaults, in its order.
var grokLibraries = []map[string]string{
	patterns.AWS, patterns.Bind9, patterns.Bro, patterns.Exim, patterns.HAProxy, patterns.Httpd,
	patterns.Firewalls, patterns.Java, patterns.Junos, patterns.Maven, patterns.MCollective,
	patterns.MongoDB, patterns.PostgreSQL, patterns.Rails, patterns.Redis, patterns.Ruby,
	patterns.Squid, patterns.Syslog,
}

// grokLibrary returns the definitions an expression is expanded with: the
// libraries, then the user's, over go-grok's defaults (looked up last).
func grokLibrary(user map[string]string) func(string) (string, bool) {
	defs := map[string]string{}
	for _, lib := range grokLibraries {
		for k, v := range lib {
			defs[k] = v
		}
	}
	for k, v := range user {
		defs[k] = v
	}
	return func(id string) (string, bool) {
		if p, ok := defs[id]; ok {
			return p, true
		}
		p, ok := patterns.Default[id]
		return p, ok
	}
}

// grokDotSep stands for '.' in capture names, which Go's regexp does not
// allow (go-grok's dotSep).
const grokDotSep = "___"

var grokReference = regexp.MustCompile(`%{(\w+(?::[\w+.]+(?::\w+)?)?)}`)

// grokExpand replaces every %{SYNTAX[:name[:type]]} of pattern with its
// definition, repeatedly, as go-grok's Grok.expand does.
func grokExpand(pattern string, lookup func(string) (string, bool), namedOnly bool) (string, error) {
	expanded := pattern
	for range 1000 { // go-grok's guard against cyclic definitions
		refs := grokReference.FindAllStringSubmatch(expanded, -1)
		if len(refs) == 0 {
			break
		}
		for _, ref := range refs {
			parts := strings.Split(ref[1], ":")
			target := parts[0]
			if len(parts) > 1 {
				target = strings.ReplaceAll(parts[1], ".", grokDotSep)
			}
			def, ok := lookup(parts[0])
			if !ok {
				return "", fmt.Errorf("pattern definition %q unknown", parts[0])
			}
			var repl string
			if namedOnly && len(parts) == 1 {
				repl = "(" + def + ")"
			} else {
				repl = "(?P<" + target + ">" + def + ")"
			}
			expanded = strings.ReplaceAll(expanded, ref[0], repl)
		}
	}
	return expanded, nil
}
