package hecwire

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1700000000", 1700000000e9, true},
		{"1700000000.123", 1700000000123000000, true},
		{"1700000000.123456789999", 1700000000123456789, true},
		{"1.7e9", 1700000000e9, true},
		{"0", 0, true},
		{"", 0, false}, {"-1", 0, false}, {"1.", 0, false}, {"abc", 0, false}, {"99999999999999999999", 0, false},
		{"1e300", 0, false},
	} {
		got, ok := ParseTime([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestAppendReply(t *testing.T) {
	for code := range NumCodes {
		_, text, ok := Status(code)
		require.True(t, ok)
		var v struct {
			Text string
			Code int
		}
		require.NoError(t, json.Unmarshal(AppendReply(nil, code, false), &v))
		assert.Equal(t, text, v.Text)
		assert.Equal(t, code, v.Code)
	}
	_, _, ok := Status(NumCodes)
	assert.False(t, ok)
}

// FuzzDecoder checks the decoder for any body: it never panics, the
// events it returns are what encoding/json reads from the same objects
// (event text, metadata, fields), and the number of a bad event is the
// number of events before it.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"event":"a","time":1700000000.5,"host":"h","fields":{"k":"v","n":[1,"x"]}}{"event":{"x":1}}`,
		`{"event":""}`, `{"host":"h"}`, `[1]`, `{"event":"a"} {"event":`, `{"event":"\u00e9\n","fields":{"a":{"b":1}}}`,
		`{"event":1e5,"time":"12"}`, ` `, `{"event":"x","index":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var d Decoder
		d.Reset(body)
		n := 0
		for {
			ev, code := d.Next()
			if code != Success {
				if code != NoData && d.Number() != n {
					t.Fatalf("bad event number %d after %d events", d.Number(), n)
				}
				if code == NoData && n != 0 {
					t.Fatalf("no data after %d events", n)
				}
				return
			}
			if ev == nil {
				return
			}
			if !ev.IsString && !json.Valid(ev.Event) {
				t.Fatalf("event text %q is not JSON", ev.Event)
			}
			if ev.IsString && len(ev.Event) == 0 {
				t.Fatal("blank event accepted")
			}
			if ev.Time != nil {
				if _, ok := ParseTime(ev.Time); !ok {
					t.Fatalf("time %q accepted", ev.Time)
				}
			}
			n++
		}
	})
}

// FuzzDecoderRoundTrip encodes an event with encoding/json and checks the
// decoder reads back the same strings.
func FuzzDecoderRoundTrip(f *testing.F) {
	f.Add("hello", "host", "key", "value", int64(1700000000123))
	f.Add("a\"b\\c\n\u00e9", "", "k\u2028", "\x01", int64(0))
	f.Fuzz(func(t *testing.T, event, host, key, value string, ms int64) {
		if event == "" || ms < 0 || ms > 1<<50 {
			return
		}
		m := map[string]any{"event": event, "host": host, "time": strconv.FormatInt(ms/1000, 10) + "." + strconv.FormatInt(1000+ms%1000, 10)[1:],
			"fields": map[string]string{key: value}}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		// encoding/json replaces invalid UTF-8 with U+FFFD: compare with
		// what it reads back.
		var back struct {
			Event, Host string
			Fields      map[string]string
		}
		require.NoError(t, json.Unmarshal(b, &back))
		var d Decoder
		d.Reset(b)
		ev, code := d.Next()
		require.Equal(t, Success, code, string(b))
		require.NotNil(t, ev)
		assert.Equal(t, back.Event, string(ev.Event))
		assert.True(t, ev.IsString)
		if back.Host == "" {
			assert.Empty(t, ev.Host)
		} else {
			assert.Equal(t, back.Host, string(ev.Host))
		}
		require.Len(t, ev.Fields, 1)
		for k, v := range back.Fields {
			assert.Equal(t, k, string(ev.Fields[0].Key))
			assert.Equal(t, v, string(ev.Fields[0].Value))
		}
		assert.Equal(t, ms*1e6, ev.Nanos)
		_, code = d.Next()
		assert.Equal(t, Success, code)
	})
}
