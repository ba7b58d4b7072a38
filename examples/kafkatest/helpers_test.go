package kafkatest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newCluster starts an in-process Kafka cluster on 127.0.0.1 with brokers
// brokers and the topics given, each with partitions partitions, and
// closes it when the test ends.
func newCluster(t testing.TB, brokers int, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(brokers), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(int(partitions))}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(partitions, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// consumed is one record read back from a topic.
type consumed struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       string
	Value     []byte
	Headers   map[string]string
	Timestamp time.Time
}

// consumeAll reads topic from the start until want records arrived or
// timeout passed, and returns what it read.
func consumeAll(t *testing.T, addrs []string, topic string, want int, timeout time.Duration) []consumed {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var out []consumed
	for len(out) < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			c := consumed{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: string(r.Key),
				Value: append([]byte(nil), r.Value...), Headers: map[string]string{}, Timestamp: r.Timestamp}
			for _, h := range r.Headers {
				c.Headers[h.Key] = string(h.Value)
			}
			out = append(out, c)
		})
	}
	return out
}

// archiveJSON is the archive JSON object the sink writes by default.
type archiveJSON struct {
	Time       string            `json:"time"`
	Host       string            `json:"host"`
	Source     string            `json:"source"`
	SourceType string            `json:"sourcetype"`
	Index      string            `json:"index"`
	Message    string            `json:"message"`
	Fields     map[string]string `json:"fields"`
}

func decodeValue(t *testing.T, v []byte) archiveJSON {
	t.Helper()
	var a archiveJSON
	require.NoError(t, json.Unmarshal(v, &a), "value %q", v)
	return a
}

func messages(t *testing.T, recs []consumed) []string {
	t.Helper()
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = decodeValue(t, r.Value).Message
	}
	return out
}

// duplicates returns how many messages occur more than once, and the
// number of distinct messages.
func duplicates(msgs []string) (dups, distinct int) {
	seen := make(map[string]int, len(msgs))
	for _, m := range msgs {
		seen[m]++
	}
	for _, n := range seen {
		dups += n - 1
	}
	return dups, len(seen)
}

func seqMsg(tag string, i int) string { return fmt.Sprintf("%s %07d", tag, i) }

// testCert returns a server TLS config with a self-signed certificate for
// 127.0.0.1 and a pool that trusts it.
func testCert(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kafkatest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}, MinVersion: tls.VersionTLS12}, pool
}
