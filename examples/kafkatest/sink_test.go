package kafkatest

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/storage"
)

func newSink(t *testing.T, cfg kafka.Config) *kafka.Sink {
	t.Helper()
	s, err := kafka.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSinkConformance(t *testing.T) {
	forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
		c := newCluster(t, 1, 3, "logs")
		s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs"})
		return forwardtest.SinkHarness{
			Sink: s,
			Received: func(want int) []string {
				return messages(t, consumeAll(t, c.ListenAddrs(), "logs", want, 5*time.Second))
			},
		}
	})
}

// testEvents returns n events with unique messages, two hosts, and a
// "tenant" field alternating between two values.
func testEvents(tag string, n int) []relaykit.Event {
	evs := make([]relaykit.Event, n)
	for i := range evs {
		e := &evs[i]
		e.Time = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixNano() + int64(i)*int64(time.Millisecond)
		e.Host = fmt.Appendf(nil, "host-%d", i%2)
		e.Source = []byte("sshd")
		e.SourceType = []byte("syslog")
		e.Raw = []byte(seqMsg(tag, i))
		e.SetFieldString("tenant", []string{"red", "blue"}[i%2])
	}
	return evs
}

func TestSinkRecords(t *testing.T) {
	c := newCluster(t, 1, 4, "t0", "t1", "t3", "t4", "red", "blue")
	addrs := c.ListenAddrs()
	tests := []struct {
		name  string
		cfg   kafka.Config
		topic string
		check func(t *testing.T, evs []relaykit.Event, recs []consumed)
	}{
		{"json/host-key/zstd", kafka.Config{Topic: "t0", Key: kafka.KeyHost, Compression: kafka.CompressionZstd}, "t0",
			func(t *testing.T, evs []relaykit.Event, recs []consumed) {
				parts := map[string]int32{}
				for _, r := range recs {
					a := decodeValue(t, r.Value)
					assert.Equal(t, r.Key, a.Host, "key is the host")
					if p, ok := parts[r.Key]; ok {
						assert.Equal(t, p, r.Partition, "one host, one partition")
					}
					parts[r.Key] = r.Partition
					assert.Equal(t, map[string]string{"host": a.Host, "source": "sshd", "sourcetype": "syslog"}, r.Headers)
					assert.Equal(t, "syslog", a.SourceType)
					assert.NotEmpty(t, a.Fields["tenant"])
				}
				// The value is the archive's JSON object, byte for byte.
				byMsg := map[string][]byte{}
				for _, r := range recs {
					byMsg[decodeValue(t, r.Value).Message] = r.Value
				}
				for i := range evs {
					assert.Equal(t, string(storage.AppendJSON(nil, &evs[i])), string(byMsg[string(evs[i].Raw)]))
				}
			}},
		{"raw/no-key/none", kafka.Config{Topic: "t1", Encoding: kafka.EncodingRaw, Compression: kafka.CompressionNone}, "t1",
			func(t *testing.T, evs []relaykit.Event, recs []consumed) {
				for _, r := range recs {
					assert.Empty(t, r.Key)
					assert.True(t, strings.HasPrefix(string(r.Value), "raw/no-key/none "), "raw value %q", r.Value)
					assert.WithinDuration(t, time.Now(), r.Timestamp, time.Minute, "record timestamp is the send time")
				}
			}},
		{"topic-field/field-key/lz4", kafka.Config{TopicField: "tenant", Key: kafka.KeyField, KeyField: "tenant", Compression: kafka.CompressionLZ4}, "red",
			func(t *testing.T, evs []relaykit.Event, recs []consumed) {
				for _, r := range recs {
					assert.Equal(t, "red", r.Key)
					assert.Equal(t, "red", decodeValue(t, r.Value).Fields["tenant"])
				}
			}},
		{"snappy/no-headers", kafka.Config{Topic: "t3", OmitHeaders: true}, "t3",
			func(t *testing.T, evs []relaykit.Event, recs []consumed) {
				for _, r := range recs {
					assert.Empty(t, r.Headers)
				}
			}},
		{"gzip", kafka.Config{Topic: "t4", Compression: kafka.CompressionGzip}, "t4", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Brokers = addrs
			s := newSink(t, tt.cfg)
			evs := testEvents(tt.name, 200)
			require.NoError(t, s.Send(t.Context(), evs))
			want := len(evs)
			if tt.topic == "red" {
				want /= 2
			}
			recs := consumeAll(t, addrs, tt.topic, want, 5*time.Second)
			require.Len(t, recs, want)
			st := s.Stats()
			assert.Equal(t, int64(len(evs)), st.EventsSent)
			assert.Zero(t, st.EventsFailed)
			if tt.check != nil {
				tt.check(t, evs, recs)
			}
		})
	}
}

// TestSinkTooLarge: an event over MaxRecordBytes is not produced; Send
// reports it as a permanent failure with ReasonTooLarge while the rest of
// its batch is delivered. An event without a usable topic is rejected the
// same way.
func TestSinkTooLarge(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), TopicField: "topic", MaxRecordBytes: 4096})
	evs := testEvents("big", 10)
	for i := range evs {
		evs[i].SetFieldString("topic", "logs")
	}
	evs[3].Raw = []byte(strings.Repeat("x", 5000))
	evs[7].DeleteField("topic") // no topic at all
	evs[8].SetFieldString("topic", "bad/topic")
	err := s.Send(t.Context(), evs)
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	reasons := map[string]int{}
	for _, f := range be.Failed {
		reasons[f.Reason] += f.To - f.From
		assert.True(t, f.Permanent)
		var se *forward.SendError
		require.ErrorAs(t, f.Err, &se)
		assert.Equal(t, "kafka", se.Destination)
		if f.Reason == relaykit.ReasonTooLarge {
			assert.Contains(t, f.Err.Error(), "exceeds MaxRecordBytes 4096")
			assert.Equal(t, [2]int{3, 4}, [2]int{f.From, f.To})
		}
	}
	assert.Equal(t, map[string]int{relaykit.ReasonTooLarge: 1, relaykit.ReasonRejected: 2}, reasons)
	got := messages(t, consumeAll(t, c.ListenAddrs(), "logs", 7, 3*time.Second))
	assert.Len(t, got, 7)
	st := s.Stats()
	assert.Equal(t, kafka.Stats{EventsSent: 7, EventsFailed: 3, TooLarge: 1, Batches: 1, BytesSent: st.BytesSent}, st)

	// The error says what happened.
	s2 := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", MaxRecordBytes: 100})
	err = s2.Send(t.Context(), evs[3:4])
	var se *forward.SendError
	require.ErrorAs(t, err, &se)
	assert.False(t, se.Retryable)
	assert.Contains(t, err.Error(), "exceeds MaxRecordBytes 100")
	// ... and which events: a delivery queue dead-letters exactly those.
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []relaykit.FailedRange{{From: 0, To: 1, Permanent: true, Reason: relaykit.ReasonTooLarge, Err: be.Failed[0].Err}}, be.Failed)
}

// TestSinkBrokerFaults: produce errors and leader changes while batches are
// sent from several goroutines: the client retries (counted), and every
// event lands exactly once (the idempotent producer) in per-key order.
func TestSinkBrokerFaults(t *testing.T) {
	c := newCluster(t, 3, 6, "logs")
	s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", Key: kafka.KeyHost})
	// Warm up: the first batch finds the leaders.
	require.NoError(t, s.Send(t.Context(), testEvents("warm", 10)))

	// Senders keep sending until the faults below were all injected.
	const senders, per, minBatches = 4, 200, 10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	var sendErrs []error
	for g := range senders {
		wg.Go(func() {
			for b := 0; ; b++ {
				select {
				case <-stop:
					if b >= minBatches {
						return
					}
				default:
				}
				err := s.Send(t.Context(), testEvents(fmt.Sprintf("g%d-b%04d", g, b), per))
				mu.Lock()
				sent += per
				sendErrs = append(sendErrs, err)
				mu.Unlock()
			}
		})
	}
	// Meanwhile: retryable produce errors, then leaders move (leader loss
	// from the client's view), twice.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	faulted := 0
	for round := range 2 {
		h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "logs", Err: kerr.NotLeaderForPartition, Count: 1})
		require.NoError(t, h.Wait(ctx, 1), "round %d: produce errors injected", round)
		faulted += h.Hits()
		c.ShufflePartitionLeaders()
		h = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "logs", Err: kerr.NotEnoughReplicas, Count: 2})
		err := h.Wait(ctx, 2)
		mu.Lock()
		t.Logf("round %d: hits %d sent %d stats %+v", round, h.Hits(), sent, s.Stats())
		mu.Unlock()
		require.NoError(t, err)
		faulted += h.Hits()
	}
	close(stop)
	wg.Wait()
	for _, err := range sendErrs {
		require.NoError(t, err)
	}
	want := 10 + sent
	got := messages(t, consumeAll(t, c.ListenAddrs(), "logs", want, 15*time.Second))
	dups, distinct := duplicates(got)
	assert.Equal(t, want, distinct, "every event delivered")
	assert.Zero(t, dups, "idempotent producer: no duplicates")
	st := s.Stats()
	assert.Equal(t, int64(want), st.EventsSent)
	assert.Zero(t, st.EventsFailed)
	assert.GreaterOrEqual(t, st.ProduceErrors, int64(1), "retries counted")
	t.Logf("faults injected %d, produce errors counted %d", faulted, st.ProduceErrors)
}

func TestSinkSASL(t *testing.T) {
	for _, mech := range []string{kafka.SASLPlain, kafka.SASLScramSHA256, kafka.SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "logs"), kfake.EnableSASL(),
				kfake.Superuser(mech, "relay", "s3cret"))
			require.NoError(t, err)
			t.Cleanup(c.Close)
			s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs",
				SASL: kafka.SASLConfig{Mechanism: mech, User: "relay", Password: "s3cret"}})
			require.NoError(t, s.Send(t.Context(), testEvents(mech, 5)))
			assert.Equal(t, int64(5), s.Stats().EventsSent)

			if mech != kafka.SASLScramSHA512 {
				return
			}
			// A wrong password: the events fail, and the error holds no
			// password.
			bad := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", DeliveryTimeout: 2 * time.Second,
				SASL: kafka.SASLConfig{Mechanism: mech, User: "relay", Password: "wrong-pw"}})
			err = bad.Send(t.Context(), testEvents(mech, 1))
			var be *relaykit.BatchError
			require.ErrorAs(t, err, &be)
			require.Len(t, be.Failed, 1)
			assert.NotContains(t, err.Error(), "wrong-pw", "no password in errors")
			// kfake closes the connection on a failed SASL exchange, so the
			// records time out (retryable); a broker that answers
			// SASL_AUTHENTICATION_FAILED makes it ReasonUnauthorized
			// (permanent).
			reason := be.Failed[0].Reason
			assert.Contains(t, []string{relaykit.ReasonUnauthorized, relaykit.ReasonSinkError}, reason)
			assert.Equal(t, reason == relaykit.ReasonUnauthorized, be.Failed[0].Permanent)
			assert.Equal(t, int64(1), bad.Stats().EventsFailed)
		})
	}
}

func TestSinkTLS(t *testing.T) {
	srv, roots := testCert(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "logs"), kfake.TLS(srv))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}})
	require.NoError(t, s.Send(t.Context(), testEvents("tls", 5)))
	assert.Equal(t, int64(5), s.Stats().EventsSent)
}

// TestSinkKcatConsumes: librdkafka's kcat reads what the sink produced,
// compressed with each codec, with keys and headers intact.
func TestSinkKcatConsumes(t *testing.T) {
	kcat := testtool.Need(t, "kcat", "apt-get install kcat")
	c := newCluster(t, 1, 2, "logs")
	var want []string
	for _, comp := range []kafka.Compression{kafka.CompressionNone, kafka.CompressionSnappy, kafka.CompressionLZ4, kafka.CompressionZstd, kafka.CompressionGzip} {
		s := newSink(t, kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", Key: kafka.KeyHost, Compression: comp})
		evs := testEvents(fmt.Sprintf("kcat-c%d", comp), 50)
		require.NoError(t, s.Send(t.Context(), evs))
		for i := range evs {
			want = append(want, fmt.Sprintf("%s|host=%s,source=sshd,sourcetype=syslog|%s", evs[i].Host, evs[i].Host, storage.AppendJSON(nil, &evs[i])))
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", c.ListenAddrs()[0], "-t", "logs", "-o", "beginning", "-e", "-q",
		"-f", "%k|%h|%s\n").CombinedOutput()
	require.NoError(t, err, "kcat: %s", out)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	slices.Sort(got)
	slices.Sort(want)
	assert.Equal(t, want, got)
}
