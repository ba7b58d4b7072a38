package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// BenchmarkTCPInput measures the CPU time of the agent process per event
// on its TCP input: one loopback connection sends 100,000 JSON lines of
// about 1 KB (one in 100 an alert), the archive is on a temporary
// directory, and HEC is a forwardtest stand-in in the benchmark's process
// (not counted). Each iteration starts an agent, sends the lines, waits
// until they are archived (with -ack: answered for), stops it with
// SIGTERM and takes its user and system CPU time from the kernel, start
// and shutdown included. It reports events per CPU-second of the agent.
//
// The agent is this test binary (see TestMain), or the program named by
// $RELAYKIT_AGENT_BIN, which must take the same flags: to compare builds,
// build each and run the benchmark against each in turn.
//
//	go build -o /tmp/agent-new ./agent
//	RELAYKIT_AGENT_BIN=/tmp/agent-new go test -run '^$' -bench TCPInput -benchtime 3x ./agent
func BenchmarkTCPInput(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchTCPInput(b, false) })
	b.Run("ack", func(b *testing.B) { benchTCPInput(b, true) })
}

func benchTCPInput(b *testing.B, ack bool) {
	const events, block = 100_000, 1000
	var lines bytes.Buffer // block lines, sent events/block times
	pad := bytes.Repeat([]byte("x"), 900)
	for i := range block {
		level := "info"
		if i%100 == 99 {
			level = "error"
		}
		fmt.Fprintf(&lines, `{"level":"%s","host":"web-%d","seq":%d,"msg":"%s"}`+"\n", level, i%16, i, pad)
	}
	size := int64(lines.Len()) * events / block
	hec := forwardtest.NewHECServer(b, forwardtest.HECServerConfig{})
	bin := os.Getenv("RELAYKIT_AGENT_BIN")
	if bin == "" {
		bin = os.Args[0]
	}
	var cpu time.Duration
	for b.Loop() {
		dir := b.TempDir()
		addr := freeAddr(b)
		args := []string{"-dir", dir, "-hec", hec.URL, "-hec-token", hec.Token(), "-syslog", "", "-json", addr}
		if ack {
			args = append(args, "-ack")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "RELAYKIT_AGENT_MAIN=1")
		require.NoError(b, cmd.Start())
		c := dial(b, addr)
		var acked atomic.Int64
		answers := make(chan error, 1)
		if ack {
			go func() { answers <- readAcks(b, c, &acked, nil) }()
		}
		w := bufio.NewWriterSize(c, 64<<10)
		for range events / block {
			_, err := w.Write(lines.Bytes())
			require.NoError(b, err)
		}
		require.NoError(b, w.Flush())
		if ack {
			require.Eventually(b, func() bool { return acked.Load() == events }, time.Minute, time.Millisecond)
		} else {
			require.Eventually(b, func() bool { return archivedBytes(b, dir) == size }, time.Minute, time.Millisecond)
		}
		require.NoError(b, cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(b, cmd.Wait())
		_ = c.Close()
		if ack {
			<-answers
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(b.N*events)/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(cpu.Seconds()*1e9/float64(b.N*events), "cpu-ns/event")
}

// archivedBytes returns the size of the archive in dir.
func archivedBytes(tb testing.TB, dir string) int64 {
	files, err := filepath.Glob(filepath.Join(dir, "agent-*.log*"))
	require.NoError(tb, err)
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}
