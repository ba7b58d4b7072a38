package delivery_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

const killSentinelEnv = "RELAYKIT_DELIVERY_KILL_SENTINEL"

// TestKillChildSentinel is the child of TestKillNineSentinel: what
// TestKillChild is to TestKillNine, with forward.Sentinel (its batches
// written ahead as the requests the Logs Ingestion API receives) in place
// of HEC.
func TestKillChildSentinel(t *testing.T) {
	dir := os.Getenv(killSentinelEnv)
	if dir == "" {
		t.Skip("run by TestKillNineSentinel")
	}
	get := func(k string) string { return os.Getenv(killSentinelEnv + "_" + k) }
	tokenClient := &http.Client{Timeout: 10 * time.Second}
	defer tokenClient.CloseIdleConnections()
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: get("TENANT"), ClientID: get("CLIENT"),
		ClientSecret: get("SECRET"), AuthorityHost: get("URL"), HTTPClient: tokenClient})
	require.NoError(t, err)
	s, err := forward.NewSentinel(forward.SentinelConfig{Endpoint: get("URL"), DCRImmutableID: get("DCR"), Stream: get("STREAM"), TokenSource: ts})
	require.NoError(t, err)
	defer s.Close()
	q, err := delivery.New(s, delivery.Config{Name: "sentinel", Dir: dir})
	require.NoError(t, err)
	ctx := context.Background()
	go q.Run(ctx) //nolint:errcheck // killed, or ends with Close
	if get("START") == "drain" {
		stop, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		require.NoError(t, q.Close(stop))
		st := q.Stats()
		fmt.Printf("drained recovered=%d delivered=%d pending=%d healthy=%v lasterr=%v dropped=%v\n", st.Recovered, st.Delivered, st.Pending, st.Healthy, st.LastError, st.Dropped)
		return
	}
	start, err := strconv.Atoi(get("START"))
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

// TestKillNineSentinel is TestKillNine with a Sentinel destination (the
// Logs Ingestion API stand-in, up in some rounds and answering 503 in
// others): 20 SIGKILLs at random moments, then a drain. Every event of
// every batch whose Send returned nil arrives; duplicates are bounded.
func TestKillNineSentinel(t *testing.T) {
	if testing.Short() {
		t.Skip("20 process restarts; run without -short")
	}
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var acked []int
	for round := range 20 {
		if round%3 == 1 {
			srv.Throttle(time.Hour, forwardtest.DCRFault{Status: http.StatusServiceUnavailable})
		} else {
			srv.Throttle(0, forwardtest.DCRFault{})
		}
		lines := killSentinelChild(t, dir, srv, strconv.Itoa(round*1_000_000), time.Duration(50+rng.IntN(400))*time.Millisecond)
		for _, l := range lines {
			if s, ok := strings.CutPrefix(l, "acked "); ok {
				n, err := strconv.Atoi(s)
				require.NoError(t, err)
				acked = append(acked, n)
			}
		}
	}
	srv.Throttle(0, forwardtest.DCRFault{})
	for range 5 {
		out := killSentinelChild(t, dir, srv, "drain", 0)
		t.Logf("drain: %v", out)
		if len(out) > 0 && strings.Contains(out[0], " pending=0 ") {
			break
		}
	}
	counts := map[string]int{}
	for _, row := range srv.Rows() {
		counts[row["RawData"].(string)]++
	}
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

// killSentinelChild runs TestKillChildSentinel; after, if positive, it
// kills it with SIGKILL, and returns what it printed.
func killSentinelChild(t *testing.T, dir string, srv *forwardtest.DCRServer, start string, after time.Duration) []string {
	t.Helper()
	c := srv.Config()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChildSentinel$", "-test.count=1")
	cmd.Env = append(os.Environ(), killSentinelEnv+"="+dir, killSentinelEnv+"_URL="+srv.URL,
		killSentinelEnv+"_TENANT="+c.TenantID, killSentinelEnv+"_CLIENT="+c.ClientID, killSentinelEnv+"_SECRET="+c.ClientSecret,
		killSentinelEnv+"_DCR="+c.DCRImmutableID, killSentinelEnv+"_STREAM="+c.Stream, killSentinelEnv+"_START="+start)
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
