package bench

import (
	"context"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
)

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKafkaHop: one op = one event delivered, in batches of 1000 (the
// relay's default batch), through the Kafka sink to an in-process kfake
// broker on 127.0.0.1 (acks=all, idempotent, keyed by host), or directly
// through forward.HEC to a local HTTP server: the cost per event of the
// Kafka hop compared with direct HEC. events/cpu-s divides by the CPU time
// of the whole process, which includes the broker or the HTTP server.
func BenchmarkKafkaHop(b *testing.B) {
	const batchSize = 1000
	pool := make([]relaykit.Event, 1000)
	for i := range pool {
		pool[i] = hecEvent(i)
	}
	run := func(b *testing.B, send func([]relaykit.Event) error) int {
		batch := make([]relaykit.Event, 0, batchSize)
		sent := 0
		flush := func() {
			if err := send(batch); err != nil {
				b.Fatal(err)
			}
			sent += len(batch)
			batch = batch[:0]
		}
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			batch = append(batch, pool[(sent+len(batch))%len(pool)])
			if len(batch) == batchSize {
				flush()
			}
		}
		if len(batch) > 0 {
			flush()
		}
		if cpu := cpuTime() - cpu0; cpu > 0 {
			b.ReportMetric(float64(sent)/cpu.Seconds(), "events/cpu-s")
		}
		b.StopTimer()
		return sent
	}
	for _, comp := range []struct {
		name string
		c    kafka.Compression
	}{{"none", kafka.CompressionNone}, {"snappy", kafka.CompressionSnappy}, {"zstd", kafka.CompressionZstd}} {
		b.Run("dest=kafka/compression="+comp.name, func(b *testing.B) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "syslog"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s, err := kafka.New(kafka.Config{Brokers: c.ListenAddrs(), Topic: "syslog", Key: kafka.KeyHost, Compression: comp.c})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sent := run(b, func(batch []relaykit.Event) error { return s.Send(b.Context(), batch) })
			// Check: the broker holds exactly what was sent.
			if st := s.Stats(); st.EventsSent != int64(sent) || st.EventsFailed != 0 {
				b.Fatalf("stats %+v, sent %d", st, sent)
			}
			if got := endOffsets(b, c.ListenAddrs(), "syslog"); got != int64(sent) {
				b.Fatalf("broker has %d records, sent %d", got, sent)
			}
		})
	}
	b.Run("dest=hec/gzip=on", func(b *testing.B) {
		srv := &countingHEC{}
		ts := httptest.NewServer(srv)
		defer ts.Close()
		h := newBenchHEC(b, ts.URL, forward.HECConfig{})
		sent := run(b, func(batch []relaykit.Event) error { return h.Send(b.Context(), batch) })
		if got := srv.events.Load(); got != int64(sent) {
			b.Fatalf("server counted %d events, sent %d", got, sent)
		}
	})
}

// endOffsets sums the end offsets of topic's partitions.
func endOffsets(b *testing.B, addrs []string, topic string) int64 {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	offs.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}
