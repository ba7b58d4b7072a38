package udp_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit/stream/udp"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/ipv4"
)

// BenchmarkServe measures datagrams per second through Serve over
// loopback: a sender writes 128-byte datagrams with sendmmsg, 64 per call,
// keeping at most 512 in flight (so the socket never overflows), and the
// handler checks their sequence numbers and counts them. One op is one
// datagram; batch is Config.BatchSize (1: one datagram per read, as
// recvmsg). Both sides run at once, so on a machine with few cores the
// sender's cost is part of the figure.
func BenchmarkServe(b *testing.B) {
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchServe(b, batch) })
	}
}

func benchServe(b *testing.B, batch int) {
	const (
		size   = 128
		window = 512
	)
	var handled, outOfOrder atomic.Int64
	var next uint64 // the reader's
	h := func(_ int, dgs []udp.Datagram) {
		for _, d := range dgs {
			if len(d.Data) != size || binary.BigEndian.Uint64(d.Data) != next {
				outOfOrder.Add(1)
				if len(d.Data) >= 8 {
					next = binary.BigEndian.Uint64(d.Data)
				}
			}
			next++
		}
		handled.Add(int64(len(dgs)))
	}
	l, err := udp.New(udp.Config{Address: "127.0.0.1:0", Handler: h, BatchSize: batch, DropPollInterval: -1})
	require.NoError(b, err)
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx) }()

	c, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	require.NoError(b, err)
	defer c.Close()
	pc := ipv4.NewPacketConn(c)
	msgs := make([]ipv4.Message, 64)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, size)}
	}
	var sent int64
	k := 0
	flush := func() {
		for sent+int64(k)-handled.Load() > window {
			runtime.Gosched()
		}
		for w := 0; w < k; {
			n, err := pc.WriteBatch(msgs[w:k], 0)
			if err != nil {
				b.Fatal(err)
			}
			w += n
		}
		sent += int64(k)
		k = 0
	}

	b.SetBytes(size)
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		binary.BigEndian.PutUint64(msgs[k].Buffers[0], uint64(sent)+uint64(k))
		if k++; k == len(msgs) {
			flush()
		}
	}
	flush()
	for handled.Load()+l.Stats().KernelDrops < sent {
		runtime.Gosched()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	require.NoError(b, <-done)
	s := l.Stats()
	b.ReportMetric(float64(handled.Load())/elapsed.Seconds(), "datagrams/s")
	b.ReportMetric(float64(s.Datagrams)/float64(max(s.Reads, 1)), "datagrams/read")
	if s.KernelDrops != 0 || outOfOrder.Load() != 0 || handled.Load() != sent {
		b.Fatalf("sent %d, handled %d, kernel drops %d, out of order %d", sent, handled.Load(), s.KernelDrops, outOfOrder.Load())
	}
}
