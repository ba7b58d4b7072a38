package service

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otlpRequestHead is the head of an OTLP/HTTP protobuf request whose body
// is n bytes long.
func otlpRequestHead(n int) string {
	return fmt.Sprintf("POST /v1/logs HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", testOTLPToken, n)
}

// otlpSendAndArchived posts one record and returns how long until it was
// answered 200; an answer means archived, which it checks.
func otlpSendAndArchived(t *testing.T, tr *testRelay, body string) time.Duration {
	t.Helper()
	before := tr.Ledger().Dest["archive"].Delivered
	start := time.Now()
	code := postOTLP(t, tr.addr("otlp/http"), "application/x-protobuf", testOTLPToken, protoBody(t, otlpLogs(body, "dev", 1)), false)
	took := time.Since(start)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, before+1, tr.Ledger().Dest["archive"].Delivered, "answered once archived")
	return took
}

// TestOTLPIdleConnectionsFromOneSource: 1,100 idle connections from one
// host to the OTLP/HTTP listener (the shipped defaults: max_connections
// 1024, 64 per source) cannot lock anyone else out: the 65th and later
// are refused and counted, and a sender from another address is answered
// (and so archived) within 2 s.
func TestOTLPIdleConnectionsFromOneSource(t *testing.T) {
	needFiles(t, 2*1100+200)
	cfg := otlpConfig(t)
	tr := startRelay(t, cfg) // fills the defaults in cfg.Inputs.OTLP
	require.Equal(t, 1024, cfg.Inputs.OTLP[0].MaxConnections, "the shipped default")
	require.Equal(t, 64, cfg.Inputs.OTLP[0].MaxConnectionsPerSource, "the shipped default")
	ln := inputsOf[*input.OTLPInput](tr.Relay)[0].HTTPListener
	for range 1100 {
		dialFrom(t, "127.0.0.2", tr.addr("otlp/http"))
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { s := ln.Stats(); return s.Accepted+s.RefusedPerSource == 1100 }, "1100 connections accepted or refused")
	s := ln.Stats()
	assert.Equal(t, int64(64), s.Open)
	assert.Equal(t, int64(1100-64), s.RefusedPerSource)
	assert.Zero(t, s.Evicted)
	assert.Equal(t, 64.0, metricValue(t, tr, "relay_input_connections", "input", "otlp"))

	assert.Less(t, otlpSendAndArchived(t, tr, "from another host"), 2*time.Second)
	assert.Equal(t, float64(1100-64), metricValue(t, tr, "relay_input_connections_refused_total", "input", "otlp", "reason", "per_source"))
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(1), st.Input["otlp"])
}

// TestOTLPCutBody: a sender that breaks off in the middle of a request
// body (20 of 1,000 bytes, then closes) has nothing of it taken in, and
// is counted as relay_otlp_errors_total{reason="body_error"}; a sender
// beside it is answered and archived.
func TestOTLPCutBody(t *testing.T) {
	tr := startRelay(t, otlpConfig(t))
	c := dialFrom(t, "127.0.0.4", tr.addr("otlp/http"))
	_, err := io.WriteString(c, otlpRequestHead(1000)+strings.Repeat("\x0a", 20))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		return metricValue(t, tr, "relay_otlp_errors_total", "input", "otlp", "reason", "body_error") == 1
	}, "the cut body counted")
	assert.Less(t, otlpSendAndArchived(t, tr, "whole"), 2*time.Second)
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(1), st.Input["otlp"], "only the whole request's record")
}

// TestOTLPSlowSendersCut runs the shipped deadlines (the 10 s header
// timeout, the 30 s body timeout; about 32 s of wall time, so it is
// skipped under -short and runs in CI's go test -race pass only): a
// sender trickling its request headers one byte a second is cut after
// 10 s, one trickling its body is answered 408 after 30 s and counted as
// body_timeout, and meanwhile a well-behaved sender is answered and
// archived at once. Nothing of the slow body is taken in.
func TestOTLPSlowSendersCut(t *testing.T) {
	t.Parallel() // waits out deadlines: overlaps with the other waiting tests
	if testing.Short() {
		t.Skip("runs the 30 s default body timeout")
	}
	cfg := otlpConfig(t)
	tr := startRelay(t, cfg)
	headerTimeout, bodyTimeout := cfg.Inputs.OTLP[0].HeaderTimeout, cfg.Inputs.OTLP[0].BodyTimeout
	require.Equal(t, 10*time.Second, headerTimeout, "the shipped default")
	require.Equal(t, 30*time.Second, bodyTimeout, "the shipped default")

	type cut struct {
		took   time.Duration
		answer string
	}
	readAll := func(c net.Conn, start time.Time, done chan<- cut) {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		b, _ := io.ReadAll(c)
		done <- cut{time.Since(start), string(b)}
	}
	var tricklers sync.WaitGroup
	trickle := func(c net.Conn, b byte) {
		tricklers.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for range tick.C {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
			}
		})
	}
	headers := dialFrom(t, "127.0.0.6", tr.addr("otlp/http"))
	headersStart := time.Now()
	_, err := io.WriteString(headers, "POST /v1/logs HTTP/1.1\r\nHost: relay\r\nX-Slow: ")
	require.NoError(t, err)
	headersDone := make(chan cut, 1)
	go readAll(headers, headersStart, headersDone)
	trickle(headers, 'x') // a header value that never ends
	slowBody := dialFrom(t, "127.0.0.8", tr.addr("otlp/http"))
	bodyStart := time.Now()
	_, err = io.WriteString(slowBody, otlpRequestHead(1000))
	require.NoError(t, err)
	bodyDone := make(chan cut, 1)
	go readAll(slowBody, bodyStart, bodyDone)
	trickle(slowBody, 0x0a)

	for i := range 5 {
		assert.Less(t, otlpSendAndArchived(t, tr, fmt.Sprintf("good %d", i)), 2*time.Second)
	}
	within := func(what string, ch chan cut, d time.Duration) cut {
		t.Helper()
		select {
		case c := <-ch:
			assert.GreaterOrEqual(t, c.took, d-time.Second, what)
			assert.Less(t, c.took, d+2*time.Second, what)
			return c
		case <-time.After(d + 10*time.Second):
			t.Fatalf("%s not cut", what)
			return cut{}
		}
	}
	within("header trickler", headersDone, headerTimeout)
	c := within("body trickler", bodyDone, bodyTimeout)
	assert.Contains(t, c.answer, "408", "the slow body is answered 408")
	headers.Close()
	slowBody.Close()
	tricklers.Wait()
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_otlp_errors_total", "input", "otlp", "reason", "body_timeout"))
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(5), st.Input["otlp"], "only the good records")
}
