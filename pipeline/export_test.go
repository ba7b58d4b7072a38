package pipeline

import "github.com/relaykit/relaykit"

// FilterInternals exposes a Filter's prefilter for tests: the searched
// literals, whether they are searched case-insensitively, whether they
// decide alone (pure), and whether a regexp runs.
func FilterInternals(f *Filter) (lits []string, fold, pure, regexp bool) {
	for _, l := range f.lits {
		lits = append(lits, string(l))
	}
	return lits, f.fold, f.pure, f.re != nil
}

// CompileFilterUncached compiles without the shared cache.
var CompileFilterUncached = compileFilter

// LowerASCII exposes lowerASCII.
var LowerASCII = lowerASCII

// ParseNumber exposes the allocation-free number parser of Aggregate.
var ParseNumber = parseNumber

// SetShardCount overrides the number of shards keyed steps built after it
// use (0 restores the default rule); it returns a func restoring it.
func SetShardCount(n int) func() {
	old := shardCount
	if n > 0 {
		shardCount = func(int) int { return n }
	}
	return func() { shardCount = old }
}

// KeyPicker exposes the key reader of the keyed steps.
type KeyPicker struct{ p picker }

// NewKeyPicker returns the key reader of a step keyed by names.
func NewKeyPicker(names []string) (*KeyPicker, error) {
	p, err := newPicker(names)
	if err != nil {
		return nil, err
	}
	return &KeyPicker{p}, nil
}

// Pick returns copies of e's key values and whether the position hints
// alone found every extracted name.
func (k *KeyPicker) Pick(e *relaykit.Event) ([]string, bool) {
	var out picked
	vals, hinted, _ := k.p.pickHinted(e, &out)
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return s, hinted
}
