package forward_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// validUTF8 replaces every byte of invalid UTF-8 with U+FFFD, as the
// encoders do.
func validUTF8(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\n\r\t\x00\x1f", `"\n\r\t\u0000\u001f"`},
		{"\xff", `"\ufffd"`},
		{"a\xe2\x28\xa1b", `"a\ufffd(\ufffdb"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"héllo ✓", `"héllo ✓"`},
	}
	for _, tt := range tests {
		got := forward.AppendJSONString(nil, []byte(tt.in))
		assert.Equal(t, tt.want, string(got), "%q", tt.in)
		assert.True(t, json.Valid(got))
	}
}

func TestAppendEpochSeconds(t *testing.T) {
	for ns, want := range map[int64]string{
		0: "0.000", 1_700_000_000_123_456_789: "1700000000.123", 999_999: "0.000", 1_000_000: "0.001", -5: "0.000",
		1_050_000_000: "1.050",
	} {
		assert.Equal(t, want, string(forward.AppendEpochSeconds(nil, ns)))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"ms", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{"x-ms", http.Header{"X-Ms-Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"capped", http.Header{"Retry-After": {"999999"}}, 24 * time.Hour},
		{"huge", http.Header{"Retry-After": {"1e300"}}, 24 * time.Hour},
		{"huge ms", http.Header{"Retry-After-Ms": {"1e300"}}, 24 * time.Hour},
		{"fraction", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, forward.ParseRetryAfter(tt.h, now))
		})
	}
}

func newTestHEC(t testing.TB, cfg forward.HECConfig) *forward.HEC {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL, cfg.Token = "http://127.0.0.1:1", "t"
	}
	h, err := forward.NewHEC(cfg)
	require.NoError(t, err)
	return h
}

func TestHECAppendEventZeroAllocs(t *testing.T) {
	for _, fields := range [][]string{nil, {"sd.*", "facility", "user"}} {
		h := newTestHEC(t, forward.HECConfig{Index: "main", Fields: fields})
		hecZeroAllocs(t, h)
	}
}

func hecZeroAllocs(t *testing.T, h *forward.HEC) {
	t.Helper()
	var e relaykit.Event
	e.Time = 1_700_000_000_123_000_000
	e.Host, e.Source, e.SourceType = []byte("web-1"), []byte("sshd"), []byte("syslog")
	e.Raw = []byte(`Failed password for "root" from 10.0.0.1 port 22 ssh2`)
	e.SetFieldString("user", "root")
	e.SetFieldString("src_ip", "10.0.0.1")
	e.SetFieldString("sd.origin@32473.enterpriseIdentifierLongerThan32", "x")
	e.SetPriority(4, 3)
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		buf, err = h.AppendEvent(buf[:0], &e)
		if err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.True(t, json.Valid(buf), string(buf))
}

// FuzzHECEncode checks that any bytes in any field encode to stacked JSON
// that parses as HEC events carrying the same (UTF-8-repaired) values.
func FuzzHECEncode(f *testing.F) {
	f.Add([]byte("hello"), []byte("host"), []byte("k"), []byte("v"), false, uint8(0))
	f.Add([]byte("\xff\xfe\"\\\n\x00"), []byte("\xc3"), []byte("\u2028"), []byte("}{"), true, uint8(35))
	f.Add([]byte(`{"event":"x"}[1,2]`), []byte(""), []byte(""), []byte(""), false, uint8(191))
	f.Fuzz(func(t *testing.T, msg, host, key, val []byte, object bool, pri uint8) {
		h := newTestHEC(t, forward.HECConfig{EventObject: object})
		var e relaykit.Event
		e.Raw, e.Host, e.ReceiveTime = msg, host, 1_700_000_000_000_000_000
		e.Fields = []relaykit.Field{{Key: key, Value: val}}
		e.SetPriority(pri>>3, pri&7)
		out, err := h.AppendEvent(nil, &e)
		if len(msg) == 0 && !object {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		out, err = h.AppendEvent(out, &e) // stacked: two objects back to back
		require.NoError(t, err)
		require.True(t, utf8.Valid(out), "output is valid UTF-8")
		dec := json.NewDecoder(bytes.NewReader(out))
		for range 2 {
			var ev map[string]any
			require.NoError(t, dec.Decode(&ev), "%q", out)
			if object {
				obj, ok := ev["event"].(map[string]any)
				require.True(t, ok)
				assert.Equal(t, validUTF8(msg), obj["message"])
			} else {
				assert.Equal(t, validUTF8(msg), ev["event"])
				fields, ok := ev["fields"].(map[string]any)
				require.True(t, ok)
				assert.Equal(t, validUTF8(val), fields[validUTF8(key)])
				if string(key) != "severity" {
					assert.Equal(t, syslogname.Severity(pri&7), fields["severity"])
				}
			}
			if len(host) > 0 {
				assert.Equal(t, validUTF8(host), ev["host"])
			}
			assert.InDelta(t, 1.7e9, ev["time"], 0)
		}
		var extra any
		assert.ErrorIs(t, dec.Decode(&extra), io.EOF)
	})
}

func TestAppendGzip(t *testing.T) {
	src := bytes.Repeat([]byte(`{"time":1700000000.123,"host":"web-1","event":"Failed password for root"}`), 200)
	prefix := []byte("keep:")
	out, err := forward.AppendGzip(prefix, src, 1)
	require.NoError(t, err)
	require.Equal(t, "keep:", string(out[:5]))
	zr, err := gzip.NewReader(bytes.NewReader(out[5:]))
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, src, got)

	buf := make([]byte, 0, len(src))
	allocs := testing.AllocsPerRun(50, func() {
		buf, _ = forward.AppendGzip(buf[:0], src, 1)
	})
	assert.Zero(t, allocs, "pooled gzip allocates nothing once warm")
	_, err = forward.AppendGzip(nil, src, 0)
	assert.Error(t, err)
}

func TestAppendRFC3339(t *testing.T) {
	assert.Equal(t, "2023-11-14T22:13:20.123456789Z", string(forward.AppendRFC3339(nil, 1_700_000_000_123_456_789)))
	assert.Equal(t, "2023-11-14T22:13:20Z", string(forward.AppendRFC3339(nil, 1_700_000_000_000_000_000)))
}
