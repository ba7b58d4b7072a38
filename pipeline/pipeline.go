package pipeline

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/relaykit/relaykit"
)

// Function is one step of a [Pipeline]. It processes an event in place.
//
// Apply returns keep=false to drop the event: later steps do not run and the
// event is not sent; the router counts the drop under the step's Name (for
// a [Reducer], keep=false means the event was absorbed into a summary to
// come, and the router counts it as reduced instead). A
// non-nil error is counted and reported (see [Hooks.OnFunctionError]) but
// does not drop the event: it continues through the remaining steps
// unchanged by the failed step, as far as that step allows.
//
// Apply may be called from several goroutines at once, each with its own
// event, so a Function must be safe for concurrent use; it must not retain
// e or its byte slices after returning.
type Function interface {
	// Name is a short stable label, fit for metrics, such as "drop" or
	// "sample". The router counts the drops of each step by it
	// (RouteStats.DroppedBy).
	Name() string
	// Apply processes e and reports whether to keep it.
	Apply(e *relaykit.Event) (keep bool, err error)
}

// Func adapts an ordinary function to a [Function] named "func", like
// http.HandlerFunc. Implement Function directly to choose another name.
type Func func(e *relaykit.Event) (keep bool, err error)

// Name returns "func".
func (f Func) Name() string { return "func" }

// Apply calls f(e).
func (f Func) Apply(e *relaykit.Event) (bool, error) { return f(e) }

// Pipeline is an ordered list of functions run over each event a route
// takes. A nil *Pipeline keeps every event unchanged.
//
// A Pipeline is immutable and safe for concurrent use by multiple
// goroutines. One Pipeline may serve several routes and routers unless it
// holds a [Reducer]: a reducer's state belongs to one route, and
// [NewRouter] refuses a reducer that two routes (or one route twice) would
// share.
type Pipeline struct {
	fns []Function
}

// NewPipeline returns a pipeline running fns in order. It panics if a
// function is nil (a programming error).
func NewPipeline(fns ...Function) *Pipeline {
	for i, f := range fns {
		if f == nil {
			panic(fmt.Sprintf("pipeline: NewPipeline: function %d is nil", i))
		}
	}
	return &Pipeline{fns: append([]Function(nil), fns...)}
}

// Len returns the number of functions in p.
func (p *Pipeline) Len() int {
	if p == nil {
		return 0
	}
	return len(p.fns)
}

// Run runs the pipeline over e outside a router. It returns whether the
// event is kept and the first error any step returned; as in a router, an
// error does not stop the pipeline.
func (p *Pipeline) Run(e *relaykit.Event) (keep bool, err error) {
	if p == nil {
		return true, nil
	}
	return p.runFrom(e, 0)
}

// Flush collects the summaries of the pipeline's [Reducer] steps, for a
// pipeline used outside a router: for each reducer in order, the
// summaries its Flush(dst, now) returns run through the steps after it
// (a later reducer may absorb them), and those kept are appended to dst.
// See [Reducer.Flush] for now and for the reuse of dst's spare capacity.
// It returns the extended slice and the first error a step returned.
//
// A router does this itself (see [Router.Flush]). Called after each
// batch, it also bounds the summaries a reducer holds between calls.
func (p *Pipeline) Flush(dst []relaykit.Event, now int64) ([]relaykit.Event, error) {
	if p == nil {
		return dst, nil
	}
	var err error
	for j, f := range p.fns {
		red, ok := f.(Reducer)
		if !ok {
			continue
		}
		start := len(dst)
		dst = red.Flush(dst, now)
		w := start
		for k := start; k < len(dst); k++ {
			keep, ferr := p.runFrom(&dst[k], j+1)
			if ferr != nil && err == nil {
				err = ferr
			}
			if keep {
				dst[w], dst[k] = dst[k], dst[w]
				w++
			}
		}
		dst = dst[:w]
	}
	return dst, err
}

// runFrom runs the steps from index j on over e.
func (p *Pipeline) runFrom(e *relaykit.Event, j int) (keep bool, err error) {
	for _, f := range p.fns[j:] {
		k, ferr := f.Apply(e)
		if ferr != nil && err == nil {
			err = fmt.Errorf("pipeline: %s: %w", f.Name(), ferr)
		}
		if !k {
			return false, err
		}
	}
	return true, err
}

// Set returns a Function named "set" that sets field to value: a metadata
// name ([FieldHost], [FieldIndex], ..., [FieldRaw]) sets that slice, any other
// name sets an extracted field (added at the end if missing). It does not
// allocate once the event's buffers are large enough.
func Set(field, value string) Function {
	return &setFn{sel: newSelector(field), value: []byte(value)}
}

type setFn struct {
	sel   selector
	value []byte
}

func (f *setFn) Name() string { return "set" }

func (f *setFn) Apply(e *relaykit.Event) (bool, error) {
	f.sel.set(e, f.value)
	return true, nil
}

// Rename returns a Function named "rename" that renames the extracted field
// from to to, keeping its position; an existing field named to is replaced.
// A missing field is not an error. Metadata names are not special here: both
// names refer to extracted fields.
func Rename(from, to string) Function {
	return &renameFn{from: from, to: to}
}

type renameFn struct{ from, to string }

func (f *renameFn) Name() string { return "rename" }

func (f *renameFn) Apply(e *relaykit.Event) (bool, error) {
	e.RenameField(f.from, f.to)
	return true, nil
}

// Remove returns a Function named "remove" that deletes the named extracted
// fields; a metadata name empties that slice instead. Missing fields are
// ignored.
func Remove(fields ...string) Function {
	f := &removeFn{}
	for _, name := range fields {
		f.sels = append(f.sels, newSelector(name))
	}
	return f
}

type removeFn struct{ sels []selector }

func (f *removeFn) Name() string { return "remove" }

func (f *removeFn) Apply(e *relaykit.Event) (bool, error) {
	for _, s := range f.sels {
		s.remove(e)
	}
	return true, nil
}

// Keep returns a Function named "keep" that projects the event onto the
// named extracted fields: every other extracted field is deleted, the kept
// ones stay in their order. A name ending in '*' keeps every field whose
// name starts with what precedes it ("json.*"; "*" alone keeps all).
// Metadata (host, source, sourcetype, index, the raw message and the
// times) is not made of extracted fields and is always kept, so metadata
// names in the list change nothing; use [Remove] to empty metadata. It
// does not allocate: deleted fields' buffers stay in the event as spare
// capacity.
func Keep(fields ...string) Function {
	f := &keepFn{}
	for _, name := range fields {
		if p, ok := strings.CutSuffix(name, "*"); ok {
			f.prefixes = append(f.prefixes, p)
		} else {
			f.names = append(f.names, name)
		}
	}
	return f
}

type keepFn struct{ names, prefixes []string }

func (f *keepFn) Name() string { return "keep" }

func (f *keepFn) Apply(e *relaykit.Event) (bool, error) {
	w := 0
	for i := range e.Fields {
		if !f.keeps(e.Fields[i].Key) {
			continue
		}
		if i != w {
			// Swap rather than copy: the dropped field's buffers move
			// past the end, where Reset and SetField reuse them.
			e.Fields[w], e.Fields[i] = e.Fields[i], e.Fields[w]
		}
		w++
	}
	for i := w; i < len(e.Fields); i++ {
		e.Fields[i].Key = e.Fields[i].Key[:0]
		e.Fields[i].Value = e.Fields[i].Value[:0]
	}
	e.Fields = e.Fields[:w]
	return true, nil
}

func (f *keepFn) keeps(key []byte) bool {
	for _, n := range f.names {
		if string(key) == n {
			return true
		}
	}
	for _, p := range f.prefixes {
		if len(key) >= len(p) && string(key[:len(p)]) == p {
			return true
		}
	}
	return false
}

// Mask returns a Function named "mask" that replaces every match of pattern
// in field (see [FieldRaw] and the other names; "" is the raw message) with
// replacement, in place. Inside replacement, $1 or ${name} stand for the
// submatch, as in regexp.Regexp.Expand; "$$" is a literal "$".
//
// The pattern goes through the same cache and literal prefilter as route
// filters, so a value that cannot match costs a bytes.Index and no
// allocation. A value that matches is rewritten with
// regexp.Regexp.ReplaceAll, which allocates the result (and, when the
// replacement refers to submatches, the match indices); the result is
// copied back into the event's own buffer. The error, if any, names the
// pattern.
func Mask(field, pattern, replacement string) (Function, error) {
	flt, err := CompileFilter(pattern)
	if err != nil {
		return nil, errFilter("mask", pattern, err)
	}
	// The pure-literal fast path may have dropped the filter's regexp;
	// ReplaceAll needs one.
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, errFilter("mask", pattern, err)
	}
	return &maskFn{sel: newSelector(field), flt: flt, re: re, repl: []byte(replacement)}, nil
}

type maskFn struct {
	sel  selector
	flt  *Filter
	re   *regexp.Regexp
	repl []byte
}

func (f *maskFn) Name() string { return "mask" }

func (f *maskFn) Apply(e *relaykit.Event) (bool, error) {
	v := f.sel.get(e)
	if !f.flt.Match(v) {
		return true, nil
	}
	out := f.re.ReplaceAll(v, f.repl)
	f.sel.set(e, out)
	return true, nil
}

// Drop returns a Function named "drop" that drops the events whose field
// (see [FieldRaw]; "" is the raw message) matches filter, a pattern with the
// same syntax, cache and prefilter as [Route.Filter]. "" or "true" drops
// every event. The error, if any, names the pattern.
func Drop(field, filter string) (Function, error) {
	flt, err := CompileFilter(filter)
	if err != nil {
		return nil, errFilter("drop", filter, err)
	}
	return &dropFn{sel: newSelector(field), flt: flt}, nil
}

type dropFn struct {
	sel selector
	flt *Filter
}

func (f *dropFn) Name() string { return "drop" }

func (f *dropFn) Apply(e *relaykit.Event) (bool, error) {
	return !f.flt.Match(f.sel.get(e)), nil
}

// Sample returns a Function named "sample" that keeps one event in n: the
// 1st, the (n+1)th, the (2n+1)th, ... of the events it sees, counted across
// all goroutines with one atomic counter, so exactly ceil(seen/n) events are
// kept and a single-goroutine run is fully deterministic. n < 1 means 1:
// keep everything. [NewSample] samples per key and dynamically, and marks
// the events it keeps with their sample rate.
func Sample(n int) Function {
	return &sampleFn{n: uint64(max(n, 1))}
}

type sampleFn struct {
	n    uint64
	seen atomic.Uint64
}

func (f *sampleFn) Name() string { return "sample" }

func (f *sampleFn) Apply(*relaykit.Event) (bool, error) {
	if f.n == 1 {
		return true, nil
	}
	return (f.seen.Add(1)-1)%f.n == 0, nil
}
