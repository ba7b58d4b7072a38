package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// fieldsEvent returns an event with host "h", the fields kv (key, value,
// ...) in that order, duplicates included, and four more named x0..x3, so
// that an event of five key-value pairs or more has more fields than the
// picker reads without hints (8).
func fieldsEvent(kv ...string) *relaykit.Event {
	e := &relaykit.Event{Host: []byte("h")}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Fields = append(e.Fields, relaykit.Field{Key: []byte(kv[i]), Value: []byte(kv[i+1])})
	}
	for i := range 4 {
		e.Fields = append(e.Fields, relaykit.Field{Key: fmt.Appendf(nil, "x%d", i), Value: []byte("x")})
	}
	return e
}

// refKey reads names the way the documented contract says, independently
// of the picker: host from Host, any other name from the first field of
// that name, missing as "".
func refKey(e *relaykit.Event, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		if n == pipeline.FieldHost {
			out[i] = string(e.Host)
			continue
		}
		for _, f := range e.Fields {
			if string(f.Key) == n {
				out[i] = string(f.Value)
				break
			}
		}
	}
	return out
}

var pickNames = []string{"host", "src", "dst", "dpt"}

func TestPickHintStaleOrder(t *testing.T) {
	k, err := pipeline.NewKeyPicker(pickNames)
	require.NoError(t, err)
	// Order A: src, dst, dpt at 2, 3, 5 of 6 fields.
	a := fieldsEvent("rt", "1", "act", "deny", "src", "10.0.0.1", "dst", "10.0.0.2", "spt", "4444", "dpt", "22")
	got, hinted := k.Pick(a)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "22"}, got)
	assert.False(t, hinted, "first event: nothing learned yet")
	got, hinted = k.Pick(a)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "22"}, got)
	assert.True(t, hinted, "same order again: the hints find every name")

	// Order B, same number of fields: the hinted indices hold other
	// names (spt where dpt was), so the picker must not read them.
	b := fieldsEvent("dpt", "443", "src", "10.0.0.3", "act", "allow", "dst", "10.0.0.4", "rt", "2", "spt", "5555")
	got, hinted = k.Pick(b)
	assert.Equal(t, []string{"h", "10.0.0.3", "10.0.0.4", "443"}, got)
	assert.False(t, hinted)
	got, hinted = k.Pick(b)
	assert.Equal(t, []string{"h", "10.0.0.3", "10.0.0.4", "443"}, got)
	assert.True(t, hinted, "order B learned")
	// Both orders are remembered (several ways per hint word).
	got, hinted = k.Pick(a)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "22"}, got)
	assert.True(t, hinted, "order A still remembered")

	// An event with 16 more fields shares the hint words of a and b (the
	// number of fields modulo 16), whose indices now hold other names.
	c := fieldsEvent("x", "1", "x", "1", "x", "1", "x", "1", "x", "1", "x", "1", "x", "1", "x", "1",
		"src", "10.0.0.5", "dst", "10.0.0.6", "rt", "1", "act", "deny", "spt", "1", "dpt", "53")
	got, _ = k.Pick(c)
	assert.Equal(t, []string{"h", "10.0.0.5", "10.0.0.6", "53"}, got)
	// An event too short for hints: read in one pass.
	d := &relaykit.Event{Host: []byte("h"), Fields: fieldsEvent("dpt", "1", "src", "2").Fields[:2]}
	got, hinted = k.Pick(d)
	assert.Equal(t, []string{"h", "2", "", "1"}, got)
	assert.False(t, hinted)
}

func TestPickHintMissingField(t *testing.T) {
	k, err := pipeline.NewKeyPicker(pickNames)
	require.NoError(t, err)
	a := fieldsEvent("src", "10.0.0.1", "dst", "10.0.0.2", "dpt", "22", "act", "deny", "rt", "1")
	for range 2 {
		k.Pick(a)
	}
	// Same number of fields, dpt replaced by another name of the same
	// length: dpt reads as empty, not as the field at its hinted index.
	b := fieldsEvent("src", "10.0.0.1", "dst", "10.0.0.2", "spt", "22", "act", "deny", "rt", "1")
	got, hinted := k.Pick(b)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", ""}, got)
	assert.False(t, hinted)
	// And the learned hints still serve a.
	got, hinted = k.Pick(a)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "22"}, got)
	assert.True(t, hinted)
}

func TestPickHintDuplicateNamesFirstWins(t *testing.T) {
	k, err := pipeline.NewKeyPicker(pickNames)
	require.NoError(t, err)
	// Learn dpt at index 4 of 6 fields.
	a := fieldsEvent("act", "deny", "spt", "1", "src", "10.0.0.1", "dst", "10.0.0.2", "dpt", "22", "rt", "1")
	for range 2 {
		k.Pick(a)
	}
	_, hinted := k.Pick(a)
	require.True(t, hinted)

	// dpt at the hinted index, but an earlier dpt too: the first wins,
	// as with Event.Field and the walk, even though the hints found
	// every name.
	b := fieldsEvent("act", "deny", "dpt", "80", "src", "10.0.0.1", "dst", "10.0.0.2", "dpt", "22", "rt", "1")
	want, _ := b.Field("dpt")
	require.Equal(t, "80", string(want))
	got, hinted := k.Pick(b)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "80"}, got)
	assert.True(t, hinted, "the earlier duplicate is found without a walk")

	// A later duplicate does not change the first.
	c := fieldsEvent("act", "deny", "spt", "1", "src", "10.0.0.1", "dst", "10.0.0.2", "dpt", "22", "dpt", "99")
	got, _ = k.Pick(c)
	assert.Equal(t, []string{"h", "10.0.0.1", "10.0.0.2", "22"}, got)

	// Every key name duplicated, each duplicate before the hinted index.
	d := fieldsEvent("dst", "d0", "src", "s0", "dpt", "p0", "dst", "10.0.0.2", "dpt", "22", "src", "x")
	got, _ = k.Pick(d)
	assert.Equal(t, refKey(d, pickNames), got)
	assert.Equal(t, []string{"h", "s0", "d0", "p0"}, got)
}

// randomEvent returns an event of one of a few layouts, some with a key
// name missing or duplicated, the values drawn at random.
func randomEvent(r *rand.Rand) *relaykit.Event {
	layouts := [][]string{
		{"rt", "act", "src", "dst", "spt", "dpt"},
		{"dpt", "src", "act", "dst", "rt", "spt"},
		{"src", "dst", "act", "rt", "spt", "app"}, // no dpt
		{"act", "dpt", "src", "dst", "dpt", "rt"}, // dpt twice
		{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "src", "dst", "dpt"},
		{"src", "dst", "dpt", "src", "dst", "dpt", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"},
		{"src", "srcx", "dst", "dpt_", "dpt"},
		{"dpt", "src", "dst"}, // short: read without hints
	}
	l := layouts[r.IntN(len(layouts))]
	kv := make([]string, 0, 2*len(l))
	for _, n := range l {
		kv = append(kv, n, fmt.Sprint(r.IntN(1000)))
	}
	return fieldsEvent(kv...)
}

func TestPickHintMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		minHits int // of 5000; layouts with every name and hints: 6/8, 6/8, 7/8, 1/8
	}{
		{pickNames, 2500}, {[]string{"dpt"}, 2500}, {[]string{"dst", "_raw", "src"}, 2500}, {[]string{"srcx", "dpt_", "dst"}, 300},
	} {
		names := tc.names
		k, err := pipeline.NewKeyPicker(names)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(1, uint64(len(names))))
		hits := 0
		for range 5000 {
			e := randomEvent(r)
			got, hinted := k.Pick(e)
			require.Equal(t, refKey(e, names), got, "names %v, event %v", names, e.Fields)
			if hinted {
				hits++
			}
		}
		assert.Greater(t, hits, tc.minHits, "names %v: the hints serve most events of a few layouts", names)
	}
}

func TestPickHintConcurrent(t *testing.T) {
	k, err := pipeline.NewKeyPicker(pickNames)
	require.NoError(t, err)
	const workers, n = 4, 2000
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range n {
				e := randomEvent(r)
				got, _ := k.Pick(e)
				if want := refKey(e, pickNames); !slices.Equal(got, want) {
					errs <- fmt.Sprintf("fields %v: got %q, want %q", e.Fields, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestSampleKeyedConcurrentFieldOrders runs a keyed sampler from several
// goroutines on events whose key fields come in different orders (and
// duplicated): each key keeps ceil(count/N) events whatever the
// interleaving, which holds only if every event's key is read right.
func TestSampleKeyedConcurrentFieldOrders(t *testing.T) {
	const n, workers, per = 4, 4, 3000
	s, err := pipeline.NewSample(pipeline.SampleConfig{N: n, Key: []string{"src", "dpt"}})
	require.NoError(t, err)
	evs := make([][]*relaykit.Event, workers)
	count := map[string]int{}
	for w := range evs {
		r := rand.New(rand.NewPCG(uint64(w), 11))
		for range per {
			e := randomEvent(r)
			for i := range e.Fields { // few distinct values: keys repeat
				e.Fields[i].Value = []byte(fmt.Sprint(r.IntN(3)))
			}
			evs[w] = append(evs[w], e)
			count[fmt.Sprint(refKey(e, []string{"src", "dpt"}))]++
		}
	}
	want := 0
	for _, c := range count {
		want += (c + n - 1) / n
	}
	var mu sync.Mutex
	kept := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			k := 0
			for _, e := range evs[w] {
				ok, err := s.Apply(e)
				assert.NoError(t, err)
				if ok {
					k++
				}
			}
			mu.Lock()
			kept += k
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Equal(t, want, kept)
}
