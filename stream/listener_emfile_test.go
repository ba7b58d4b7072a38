//go:build linux

package stream_test

import (
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When the process runs out of file descriptors, accept fails with EMFILE:
// the listener backs off and keeps serving, counts the errors, logs the
// episode once, and accepts the waiting connection, and a new sender, once
// descriptors are free again. The test lowers this process's soft
// RLIMIT_NOFILE and fills the descriptor table for real, in a process of its
// own so that no other test's closing connection frees a descriptor
// mid-episode.
func TestListenerAcceptEMFILE(t *testing.T) {
	if !testtool.Isolated(t) {
		return
	}
	logs := &recordHandler{}
	s := serve(t, stream.Config{Logger: slog.New(logs)})

	c1 := newRawSender(t, "127.0.0.2")
	release := exhaustDescriptors(t) // none is left for accept
	c1.send(s.ln.Addr(), []byte("<13>during\n"))
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.AcceptErrors >= 3 && st.AcceptFailing },
		10*time.Second, time.Millisecond, "accept errors")
	select {
	case f := <-s.frames:
		t.Fatalf("frame %q served without a descriptor", f)
	default:
	}

	release()
	select {
	case f := <-s.frames:
		assert.Equal(t, "<13>during", f)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not served after the episode")
	}
	c2 := testtool.Dial(t, "127.0.0.3", s.ln.Addr())
	_, err := io.WriteString(c2, "<13>after\n")
	require.NoError(t, err)
	select {
	case f := <-s.frames:
		assert.Equal(t, "<13>after", f)
	case <-time.After(5 * time.Second):
		t.Fatal("a new sender was not served after the episode")
	}
	st := s.ln.Stats()
	assert.GreaterOrEqual(t, st.AcceptErrors, int64(3))
	assert.False(t, st.AcceptFailing)
	assert.Equal(t, int64(2), st.Accepted)
	assert.Equal(t, []string{
		"WARN accept failing, retrying with backoff; new connections wait in the backlog",
		"INFO accepting again",
	}, logs.messages())
}

// exhaustDescriptors lowers this process's soft RLIMIT_NOFILE to a little
// above what it uses and opens files until open fails with EMFILE. It
// returns a func that closes them (the episode's end); the limit is
// restored when the test ends.
func exhaustDescriptors(t *testing.T) (release func()) {
	t.Helper()
	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	low := rl
	low.Cur = uint64(len(fds) + 32)
	require.Less(t, low.Cur, rl.Cur, "the soft limit is already low")
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	var fill []*os.File
	release = func() {
		for _, f := range fill {
			f.Close()
		}
		fill = nil
	}
	t.Cleanup(func() {
		release()
		assert.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl))
	})
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			require.ErrorIs(t, err, syscall.EMFILE)
			break
		}
		fill = append(fill, f)
	}
	require.NotEmpty(t, fill)
	return release
}
