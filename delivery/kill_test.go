package delivery_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

const killEnv = "RELAYKIT_DELIVERY_KILL"

// TestKillChild is the child of TestKillNine: a Queue (default settings,
// WriteAhead) in front of forward.HEC. It sends numbered batches of 50
// events from START and prints "acked N" after each Send returned nil,
// until it is killed. With START=drain it only delivers the backlog and
// exits.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killEnv)
	if dir == "" {
		t.Skip("run by TestKillNine")
	}
	hec, err := forward.NewHEC(forward.HECConfig{URL: os.Getenv(killEnv + "_URL"), Token: os.Getenv(killEnv + "_TOKEN")})
	require.NoError(t, err)
	defer hec.Close()
	q, err := delivery.New(hec, delivery.Config{Name: "hec", Dir: dir})
	require.NoError(t, err)
	ctx := context.Background()
	go q.Run(ctx) //nolint:errcheck // killed, or ends with Close
	if os.Getenv(killEnv+"_START") == "drain" {
		stop, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		require.NoError(t, q.Close(stop))
		st := q.Stats()
		fmt.Printf("drained recovered=%d delivered=%d pending=%d healthy=%v lasterr=%v dropped=%v spool=%+v\n", st.Recovered, st.Delivered, st.Pending, st.Healthy, st.LastError, st.Dropped, st.Spool)
		return
	}
	start, err := strconv.Atoi(os.Getenv(killEnv + "_START"))
	require.NoError(t, err)
	for seq := start; ; seq += 50 {
		if err := q.Send(ctx, batchOf(seq, 50)); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("acked", seq) // unbuffered: printed only after Send returned
		time.Sleep(time.Millisecond)
	}
}

// TestKillNine kills a process sending through a Queue with SIGKILL at
// random moments, 20 times, while the destination (a HEC stand-in) is up
// in some rounds and down in others, then lets a last process deliver the
// backlog. Every event of every batch whose Send returned nil arrives,
// those sent after each restart included; duplicates are counted (a batch
// in flight at the kill, or acknowledged on the destination but not yet
// on disk, is sent again).
func TestKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("20 process restarts; run without -short")
	}
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var acked []int // first seq of each acknowledged batch
	for round := range 20 {
		srv.SetDown(round%3 == 1)
		lines := killChild(t, dir, srv, strconv.Itoa(round*1_000_000), time.Duration(50+rng.IntN(400))*time.Millisecond)
		for _, l := range lines {
			if s, ok := strings.CutPrefix(l, "acked "); ok {
				n, err := strconv.Atoi(s)
				require.NoError(t, err)
				acked = append(acked, n)
			}
		}
	}
	srv.SetDown(false)
	// A stop leaves the backlog on disk if the destination failed during
	// it; a next run goes on.
	for range 5 {
		out := killChild(t, dir, srv, "drain", 0)
		t.Logf("drain: %v", out)
		if len(out) > 0 && strings.Contains(out[0], " pending=0 ") {
			break
		}
	}
	counts := srv.Counts()
	lost, dups := 0, 0
	for _, first := range acked {
		for i := range 50 {
			if counts[strconv.Itoa(first+i)] == 0 {
				lost++
			}
		}
	}
	for _, c := range counts {
		dups += max(c-1, 0)
	}
	require.NotEmpty(t, acked)
	assert.Zero(t, lost, "events of acknowledged batches lost")
	t.Logf("%d batches acknowledged over 20 kills; %d events delivered, %d duplicates", len(acked), len(counts), dups)
	assert.Less(t, dups, len(acked)*50/4, "duplicates bounded")
}

// killChild runs TestKillChild; after, if positive, it kills it with
// SIGKILL, and returns what it printed.
func killChild(t *testing.T, dir string, srv *forwardtest.HECServer, start string, after time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"="+dir, killEnv+"_URL="+srv.URL, killEnv+"_TOKEN="+srv.Token(), killEnv+"_START="+start)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()
	if after > 0 {
		time.Sleep(after) // a random moment to kill at
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	}
	<-done
	err = cmd.Wait()
	if after == 0 {
		require.NoError(t, err, "drain: %v", lines)
	}
	return lines
}

var _ relaykit.Sink = (*delivery.Queue)(nil)
