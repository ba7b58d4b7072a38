package input_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/storage/deadletter"
	"github.com/relaykit/relaykit/stream"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) records(t *testing.T) []deadletter.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []deadletter.Record
	for _, line := range bytes.SplitAfter(l.b.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r, err := deadletter.Parse(line)
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

func newJSONLines(t *testing.T, cfg input.JSONLinesConfig) *input.JSONLines {
	t.Helper()
	j, err := input.NewJSONLines(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// Valid lines become events (the line, the sender's address, the
// sourcetype); invalid and too long ones are refused, dead-lettered and
// counted; blank lines are skipped.
func TestJSONLines(t *testing.T) {
	r := runEngine(t)
	var letters lockedBuffer
	dl, err := deadletter.NewWriter(deadletter.Config{Writer: &letters})
	require.NoError(t, err)
	in := r.eng.NewInput("json")
	j := newJSONLines(t, input.JSONLinesConfig{Input: in, MaxLineSize: 32, SourceType: "_json", DeadLetters: dl})
	ln, _ := serveStream(t, stream.Config{}, j.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	_, err = io.WriteString(c, `{"level":"info"}`+"\n\n"+`{oops`+"\r\n"+`{"msg":"`+strings.Repeat("z", 40)+`"}`+"\n"+`[1,2]`+"\n")
	require.NoError(t, err)

	evs := r.wait(t, 2)
	assert.Equal(t, []string{`{"level":"info"}`, `[1,2]`}, raws(evs))
	for _, e := range evs {
		assert.Equal(t, "127.0.0.1", string(e.Host))
		assert.Equal(t, "_json", string(e.SourceType))
	}
	require.Eventually(t, func() bool { return j.Stats().Invalid == 2 }, 10*time.Second, time.Millisecond)
	recs := letters.records(t)
	require.Len(t, recs, 2)
	assert.Equal(t, "json", recs[0].Input)
	assert.Equal(t, "127.0.0.1", recs[0].Peer)
	assert.Equal(t, "invalid json", recs[0].Reason)
	assert.Equal(t, "{oops", string(recs[0].Line))
	assert.Equal(t, "line longer than 32 bytes", recs[1].Reason)
	assert.Equal(t, int64(2), in.Stats().Dropped[relaykit.ReasonInvalidJSON])
	st := j.Stats()
	assert.Equal(t, int64(4), st.Frames)
	assert.Equal(t, int64(1), st.Truncated)
	assert.Equal(t, int64(1), st.Framing.EmptyFrames)
	assert.Zero(t, st.Acks, "no Ack: nothing is written to the connection")
}

// readAnswers reads "ok N" lines from c into out until c closes, and
// then closes out.
func readAnswers(c io.Reader, out chan<- int) {
	defer close(out)
	br := bufio.NewReader(c)
	for {
		s, err := br.ReadString('\n')
		if err != nil {
			return
		}
		var n int
		if _, err := fmt.Sscanf(s, "ok %d\n", &n); err != nil {
			return
		}
		out <- n
	}
}

// With Ack, each answer comes only once the lines it answers for are in
// the Sink, blank and refused lines count, and the answers add up to every
// line sent.
func TestJSONLinesAck(t *testing.T) {
	r := runEngine(t)
	var acked int
	j := newJSONLines(t, input.JSONLinesConfig{Input: r.eng.NewInput("json"), Ack: func(c *stream.Conn, lines int) error {
		_, err := fmt.Fprintf(c, "ok %d\n", lines)
		return err
	}})
	ln, _ := serveStream(t, stream.Config{}, j.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	answers := make(chan int, 100)
	go readAnswers(c, answers)

	sent, valid := 0, 0
	for round := range 10 {
		var b strings.Builder
		for i := range 20 {
			fmt.Fprintf(&b, `{"round":%d,"i":%d}`+"\n", round, i)
			valid++
		}
		b.WriteString("\n{bad\n") // a blank line and a refused one count too
		sent += 22
		_, err := io.WriteString(c, b.String())
		require.NoError(t, err)
		for acked < sent {
			n, ok := <-answers
			require.True(t, ok, "the connection closed")
			acked += n
			// The valid lines among the first acked: 20 of every 22.
			answered := acked/22*20 + min(acked%22, 20)
			assert.GreaterOrEqual(t, r.rec.len(), answered, "answered for %d lines before they were in the Sink", acked)
		}
		assert.Equal(t, sent, acked)
		assert.Equal(t, valid, r.rec.len(), "every valid line answered for is in the Sink")
	}
	// Counted once Ack returned, after the sender read the answer.
	require.Eventually(t, func() bool { return j.Stats().AckedLines == int64(sent) }, 10*time.Second, time.Millisecond)
}

// When the Sink refuses the lines, the connection closes without an answer
// for them.
func TestJSONLinesAckRefused(t *testing.T) {
	r := runEngine(t)
	r.rec.refuse.Store(true)
	j := newJSONLines(t, input.JSONLinesConfig{Input: r.eng.NewInput("json"), Ack: func(c *stream.Conn, lines int) error {
		_, err := fmt.Fprintf(c, "ok %d\n", lines)
		return err
	}})
	ln, _ := serveStream(t, stream.Config{}, j.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	answers := make(chan int, 10)
	go readAnswers(c, answers)
	_, err := io.WriteString(c, `{"a":1}`+"\n")
	require.NoError(t, err)
	_, ok := <-answers
	assert.False(t, ok, "closed without an answer")
	assert.Zero(t, j.Stats().Acks)
}

// A bad Config is refused with a FieldError naming the field.
func TestJSONLinesConfig(t *testing.T) {
	r := runEngine(t)
	in := r.eng.NewInput("json")
	for field, cfg := range map[string]input.JSONLinesConfig{
		"Input":       {},
		"MaxLineSize": {Input: in, MaxLineSize: -1},
		"ReadSize":    {Input: in, ReadSize: -1},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := input.NewJSONLines(cfg); return err }()} {
			require.ErrorIs(t, err, input.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, field, fe.Field)
		}
	}
}
