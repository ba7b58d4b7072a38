package pipelinetest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

func TestRecorderCopies(t *testing.T) {
	r := pipelinetest.NewRecorder("dest")
	assert.Equal(t, "dest", r.Name())
	batch := []relaykit.Event{{Raw: []byte("one")}, {Raw: []byte("two")}}
	require.NoError(t, r.Send(t.Context(), batch))
	batch[0].Raw[0] = 'X' // the caller reuses its batch: the recorder kept its own copy
	got := r.Events()
	require.Len(t, got, 2)
	assert.Equal(t, "one", string(got[0].Raw))
	got[1].Raw[0] = 'Y' // and Events hands out copies
	assert.Equal(t, "two", string(r.Events()[1].Raw))
	assert.Equal(t, 1, r.Batches())
	r.Reset()
	assert.Equal(t, 0, r.Len())
	assert.Equal(t, 0, r.Batches())
}

func TestRecorderConcurrent(t *testing.T) {
	r := pipelinetest.NewRecorder("dest")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_ = r.Send(context.Background(), []relaykit.Event{{Raw: []byte("x")}})
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 800, r.Len())
	assert.Equal(t, 800, r.Batches())
}

func TestWant(t *testing.T) {
	re, err := pipelinetest.Match(`^Forti`)
	require.NoError(t, err)
	_, err = pipelinetest.Match(`(`)
	require.Error(t, err)
	for _, tc := range []struct {
		name    string
		want    pipelinetest.Want
		got     string
		present bool
		ok      bool
	}{
		{"equal", pipelinetest.Equal("a"), "a", true, true},
		{"equal differs", pipelinetest.Equal("a"), "b", true, false},
		{"equal absent", pipelinetest.Equal(""), "", false, false},
		{"equal empty present", pipelinetest.Equal(""), "", true, true},
		{"match", re, "Fortinet", true, true},
		{"match differs", re, "Palo Alto", true, false},
		{"match absent", re, "", false, false},
		{"absent", pipelinetest.Absent(), "", false, true},
		{"absent but present", pipelinetest.Absent(), "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, tc.want.Check(tc.got, tc.present))
		})
	}
}

func TestCompareEvent(t *testing.T) {
	var e relaykit.Event
	e.Raw = []byte("msg")
	e.Host = []byte("fw1")
	e.SetFieldString("empty", "")
	e.SetFieldString("act", "deny")
	re, _ := pipelinetest.Match("^al")
	got := pipelinetest.CompareEvent(&e, map[string]pipelinetest.Want{
		"_raw":   pipelinetest.Equal("msg"),
		"host":   pipelinetest.Equal("fw2"),
		"source": pipelinetest.Absent(),
		"index":  pipelinetest.Equal(""), // metadata: empty is absent
		"empty":  pipelinetest.Equal(""), // a field: empty is present
		"act":    re,
		"user":   pipelinetest.Equal("bob"),
	})
	var lines []string
	for _, m := range got {
		lines = append(lines, m.String())
	}
	assert.Equal(t, []string{
		`act: want /^al/, got "deny"`,
		`host: want "fw2", got "fw1"`,
		`index: want "", got absent`,
		`user: want "bob", got absent`,
	}, lines)
	assert.Nil(t, pipelinetest.CompareEvent(&e, map[string]pipelinetest.Want{"host": pipelinetest.Equal("fw1")}))
}
