package deadletter_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/storage/deadletter"
)

var t0 = time.Date(2026, 11, 28, 12, 58, 59, 123456789, time.UTC)

// The lines that land in a dead-letter file: what a JSON input refused.
var rejected = [][]byte{
	[]byte(`{"msg":"ok","n":1`),
	[]byte("nul\x00inside"),
	[]byte("bell\a and tab\t and cr\r"),
	[]byte("latin-1 caf\xe9 \xff\xfe"),
	[]byte("del\x7f and \u2028 and emoji 🎉"),
	[]byte(`quote " and backslash \ and </script>`),
	{},
}

func TestEveryLineIsJSONAndRecoversTheBytes(t *testing.T) {
	var out bytes.Buffer
	w, err := deadletter.NewWriter(deadletter.Config{Writer: &out, Clock: clock.NewFake(t0)})
	require.NoError(t, err)
	for _, line := range rejected {
		require.NoError(t, w.Write(deadletter.Record{Input: "json", Peer: "10.0.0.5:514", Reason: "invalid_json", Line: line}))
	}
	lines := strings.SplitAfter(out.String(), "\n")
	require.Equal(t, "", lines[len(lines)-1])
	lines = lines[:len(lines)-1]
	require.Len(t, lines, len(rejected))
	for i, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "line %d is JSON: %s", i, l)
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &obj), "encoding/json takes line %d", i)
		r, err := deadletter.Parse([]byte(l))
		require.NoError(t, err)
		assert.Equal(t, string(rejected[i]), string(r.Line), "line %d round trip", i)
		assert.Equal(t, "json", r.Input)
		assert.Equal(t, "10.0.0.5:514", r.Peer)
		assert.Equal(t, "invalid_json", r.Reason)
		assert.True(t, r.Time.Equal(t0))
	}
	assert.Contains(t, lines[0], `"line":"{\"msg\":\"ok\",\"n\":1"`, "valid UTF-8 is readable text")
	assert.Contains(t, lines[1], `"line":"nul\u0000inside"`)
	assert.Contains(t, lines[3], `"line_base64":"`, "invalid UTF-8 is base64")
	assert.NotContains(t, lines[3], `"line":`)
	assert.Equal(t, deadletter.Stats{Records: int64(len(rejected))}, w.Stats())
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestWriteErrorIsCounted(t *testing.T) {
	w, err := deadletter.NewWriter(deadletter.Config{Writer: failing{}})
	require.NoError(t, err)
	err = w.Write(deadletter.Record{Line: []byte("x")})
	require.ErrorContains(t, err, "disk gone")
	assert.Equal(t, deadletter.Stats{Errors: 1}, w.Stats())
}

func TestNewWriterNeedsAWriter(t *testing.T) {
	_, err := deadletter.NewWriter(deadletter.Config{})
	require.ErrorIs(t, err, deadletter.ErrInvalidConfig)
	var fe *relaykit.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Writer", fe.Field)
}

func TestParseRefuses(t *testing.T) {
	_, err := deadletter.Parse([]byte(`{"time":"2026-11-28T12:58:59Z"}`))
	assert.ErrorIs(t, err, deadletter.ErrNoLine)
	_, err = deadletter.Parse([]byte(`{"line_base64":"***"}`))
	assert.Error(t, err)
	_, err = deadletter.Parse([]byte(`not json`))
	assert.Error(t, err)
}

// FuzzRoundTrip: whatever bytes and metadata, the record is one line that
// encoding/json accepts, and Parse gives the bytes back exactly.
func FuzzRoundTrip(f *testing.F) {
	for _, l := range rejected {
		f.Add(l, "json", "127.0.0.1:1", "invalid_json")
	}
	f.Add([]byte("\n\r\n"), "in\xff", "peer\x00", "reason\n")
	f.Fuzz(func(t *testing.T, line []byte, input, peer, reason string) {
		b := deadletter.Append(nil, deadletter.Record{Time: t0, Input: input, Peer: peer, Reason: reason, Line: line})
		if !json.Valid(b) {
			t.Fatalf("not JSON: %q", b)
		}
		if bytes.IndexByte(b, '\n') != len(b)-1 {
			t.Fatalf("not one line: %q", b)
		}
		r, err := deadletter.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Line, line) {
			t.Fatalf("line %q came back as %q", line, r.Line)
		}
	})
}
