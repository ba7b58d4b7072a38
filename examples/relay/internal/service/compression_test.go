package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// loadHEC loads a config whose only extra is an hec destination with the
// given extra YAML lines.
func loadHEC(t *testing.T, extra string) (config.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay.yaml")
	yaml := fmt.Sprintf(`destinations:
  hec:
    type: hec
    url: http://127.0.0.1:8088
    token: t
%s
routes:
  - {name: all, final: true, destinations: [hec]}
spool: {dir: %s}
dead_letter: {dir: %s}
`, extra, filepath.Join(t.TempDir(), "spool"), filepath.Join(t.TempDir(), "dl"))
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	return config.LoadConfig(path)
}

// compression_level reaches forward.HTTPConfig.GzipLevel as a number or a
// name; anything else, and a level with gzip off, is refused naming the
// field.
func TestCompressionLevelConfig(t *testing.T) {
	r := dest.SinkEnv{Log: slog.New(slog.DiscardHandler)}
	for _, tt := range []struct {
		value string
		want  int
	}{{"1", 1}, {"9", 9}, {"huffman_only", forward.GzipHuffmanOnly}, {"stateless", forward.GzipStateless}} {
		cfg, err := loadHEC(t, "    compression_level: "+tt.value)
		require.NoError(t, err, tt.value)
		h := cfg.Destinations["hec"].Spec.(*dest.HECDestination)
		hc, err := r.HTTPConfig("hec", &h.NetworkSettings, &h.HTTPSettings)
		require.NoError(t, err)
		assert.Equal(t, tt.want, hc.GzipLevel, tt.value)
	}
	cfg, err := loadHEC(t, "")
	require.NoError(t, err)
	h := cfg.Destinations["hec"].Spec.(*dest.HECDestination)
	hc, err := r.HTTPConfig("hec", &h.NetworkSettings, &h.HTTPSettings)
	require.NoError(t, err)
	assert.Equal(t, 0, hc.GzipLevel, "left out: forward's default")

	for _, bad := range []string{"0", "10", "-2", "fast", "none"} {
		_, err := loadHEC(t, "    compression_level: "+bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "compression_level", bad)
	}
	_, err = loadHEC(t, "    gzip: false\n    compression_level: 9")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hec.compression_level")
}

// A sentinel destination's compression_level is the level its requests
// are compressed with: the same batch takes more bytes on the wire with
// huffman_only than with 9, and the rows arrive either way.
func TestSentinelCompressionLevel(t *testing.T) {
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog"})
	dc := dcr.Config()
	r := dest.SinkEnv{Log: slog.New(slog.DiscardHandler)}
	batch := make([]relaykit.Event, 200)
	for i := range batch {
		batch[i].Time = time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC).UnixNano()
		batch[i].Host = []byte("web-1")
		batch[i].Raw = fmt.Appendf(nil, "GET /api/v1/items?id=%d HTTP/1.1 200 %s", i, strings.Repeat("ok ", i%7))
	}
	wire := map[dest.CompressionLevel]int64{}
	for _, level := range []dest.CompressionLevel{forward.GzipHuffmanOnly, 9} {
		d := &dest.SentinelDestination{
			Endpoint: dcr.URL, AuthorityHost: dcr.AuthorityHost, Table: "syslog",
			DCRImmutableID: dc.DCRImmutableID, TenantID: dc.TenantID, ClientID: dc.ClientID,
			ClientSecret: config.Secret(dc.ClientSecret), NetworkSettings: dest.NetworkSettings{Timeout: 5 * time.Second},
			HTTPSettings: dest.HTTPSettings{CompressionLevel: level},
		}
		ck := &config.Checker{}
		d.ValidateTable("destinations.sentinel", ck) // fills the table's stream
		d.HTTPSettings.Validate("destinations.sentinel", ck)
		require.Empty(t, ck.Errs)
		sink, err := dest.NewSink(d, r, "sentinel")
		require.NoError(t, err)
		require.NoError(t, sink.Send(context.Background(), batch))
		wire[level] = sink.(*forward.Sentinel).Stats().WireBytes
		require.NoError(t, sink.Close())
	}
	assert.Len(t, dcr.Rows(), 2*len(batch))
	assert.Greater(t, wire[forward.GzipHuffmanOnly], wire[9]*3/2, "huffman_only %d bytes, 9 %d bytes", wire[forward.GzipHuffmanOnly], wire[9])
}

// An otlp destination takes compression_level as the hec and sentinel
// ones do: the level reaches its exporter (which accepts huffman_only
// and stateless), and a level with gzip: false is refused.
func TestOTLPCompressionLevel(t *testing.T) {
	load := func(extra string) (config.Config, error) {
		path := filepath.Join(t.TempDir(), "relay.yaml")
		yaml := fmt.Sprintf(`destinations:
  otel:
    type: otlp
    endpoint: http://127.0.0.1:4318
%s
routes:
  - {name: all, final: true, destinations: [otel]}
spool: {dir: %s}
dead_letter: {dir: %s}
`, extra, filepath.Join(t.TempDir(), "spool"), filepath.Join(t.TempDir(), "dl"))
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
		return config.LoadConfig(path)
	}
	r := dest.SinkEnv{Log: slog.New(slog.DiscardHandler)}
	for _, tt := range []struct {
		value string
		want  dest.CompressionLevel
	}{{"9", 9}, {"huffman_only", forward.GzipHuffmanOnly}, {"stateless", forward.GzipStateless}} {
		cfg, err := load("    compression_level: " + tt.value)
		require.NoError(t, err, tt.value)
		o := cfg.Destinations["otel"].Spec.(*dest.OTLPDestination)
		assert.Equal(t, tt.want, o.CompressionLevel, tt.value)
		s, err := dest.NewSink(o, r, "otel")
		require.NoError(t, err, "the exporter takes level %s", tt.value)
		require.NoError(t, s.Close())
	}
	_, err := load("    gzip: false\n    compression_level: 9")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "otel.compression_level")
}
