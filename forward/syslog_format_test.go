package forward

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

var rfc3339Re = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$`)

// parsed5424 is a message split by check5424.
type parsed5424 struct {
	pri                              int
	ts, host, app, procID, msgID, sd string
	params                           map[string]string // of the first SD-ELEMENT
	msg                              string
	hasMsg                           bool
}

// check5424 is a strict parser of the RFC 5424 ABNF (section 6), used to
// prove the encoder's output is always well-formed.
func check5424(b []byte) (parsed5424, error) {
	var p parsed5424
	s := string(b)
	if len(s) < 3 || s[0] != '<' {
		return p, errors.New("no PRI")
	}
	end := 1
	for end < len(s) && end <= 4 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 1 || end > 4 || end >= len(s) || s[end] != '>' {
		return p, errors.New("bad PRI")
	}
	digits := s[1:end]
	if len(digits) > 1 && digits[0] == '0' {
		return p, errors.New("PRI with leading zero")
	}
	p.pri, _ = strconv.Atoi(digits)
	if p.pri > 191 {
		return p, errors.New("PRI out of range")
	}
	s = s[end+1:]
	if len(s) < 2 || s[:2] != "1 " {
		return p, errors.New("bad VERSION")
	}
	s = s[2:]
	fields := []struct {
		dst *string
		max int
	}{{&p.ts, 64}, {&p.host, 255}, {&p.app, 48}, {&p.procID, 128}, {&p.msgID, 32}}
	for i, f := range fields {
		j := 0
		for j < len(s) && s[j] != ' ' {
			if s[j] < 33 || s[j] > 126 {
				return p, fmt.Errorf("header field %d: byte %#x", i, s[j])
			}
			j++
		}
		if j == 0 || j > f.max || j == len(s) {
			return p, fmt.Errorf("header field %d: bad length or missing SP", i)
		}
		*f.dst = s[:j]
		s = s[j+1:]
	}
	if p.ts != "-" && !rfc3339Re.MatchString(p.ts) {
		return p, fmt.Errorf("bad TIMESTAMP %q", p.ts)
	}
	if p.ts != "-" {
		if _, err := time.Parse(time.RFC3339Nano, p.ts); err != nil {
			return p, err
		}
	}
	sdStart := s
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	} else {
		if len(s) == 0 || s[0] != '[' {
			return p, errors.New("no STRUCTURED-DATA")
		}
		for len(s) > 0 && s[0] == '[' {
			var err error
			s, err = checkSDElement(s[1:], &p)
			if err != nil {
				return p, err
			}
		}
	}
	p.sd = sdStart[:len(sdStart)-len(s)]
	if len(s) > 0 {
		if s[0] != ' ' {
			return p, errors.New("no SP before MSG")
		}
		p.msg, p.hasMsg = s[1:], true
	}
	return p, nil
}

func sdName(s string) (string, string, error) {
	j := 0
	for j < len(s) && s[j] >= 33 && s[j] <= 126 && s[j] != '=' && s[j] != ']' && s[j] != '"' && s[j] != ' ' {
		j++
	}
	if j == 0 || j > 32 {
		return "", s, errors.New("bad SD-NAME")
	}
	return s[:j], s[j:], nil
}

func checkSDElement(s string, p *parsed5424) (string, error) {
	id, s, err := sdName(s)
	if err != nil {
		return s, err
	}
	_ = id
	first := p.params == nil
	if first {
		p.params = map[string]string{}
	}
	for {
		if len(s) == 0 {
			return s, errors.New("unterminated SD-ELEMENT")
		}
		if s[0] == ']' {
			return s[1:], nil
		}
		if s[0] != ' ' {
			return s, errors.New("no SP before SD-PARAM")
		}
		var name string
		name, s, err = sdName(s[1:])
		if err != nil {
			return s, err
		}
		if len(s) < 2 || s[0] != '=' || s[1] != '"' {
			return s, errors.New("no =\" in SD-PARAM")
		}
		s = s[2:]
		var val []byte
		for {
			if len(s) == 0 {
				return s, errors.New("unterminated PARAM-VALUE")
			}
			c := s[0]
			if c == '"' {
				s = s[1:]
				break
			}
			if c == ']' {
				return s, errors.New("unescaped ] in PARAM-VALUE")
			}
			if c == '\\' && len(s) > 1 && (s[1] == '"' || s[1] == '\\' || s[1] == ']') {
				val = append(val, s[1])
				s = s[2:]
				continue
			}
			val = append(val, c)
			s = s[1:]
		}
		if !utf8.Valid(val) {
			return s, errors.New("PARAM-VALUE not UTF-8")
		}
		if first {
			p.params[name] = string(val)
		}
	}
}

func testEncoder(cfg SyslogConfig) *syslogEncoder {
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1:1"
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "relayhost"
	}
	s, err := NewSyslog(cfg)
	if err != nil {
		panic(err)
	}
	return &s.enc
}

func TestSyslogEncode5424(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC).UnixNano()
	ev := func(f func(e *relaykit.Event)) relaykit.Event {
		e := relaykit.Event{Time: ts, Host: []byte("web1"), Source: []byte("nginx"), Raw: []byte("GET / 200")}
		f(&e)
		return e
	}
	tests := []struct {
		name string
		cfg  SyslogConfig
		ev   relaykit.Event
		want string
	}{
		{"defaults", SyslogConfig{}, ev(func(*relaykit.Event) {}),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - - GET / 200"},
		{"priority from event", SyslogConfig{}, ev(func(e *relaykit.Event) { e.SetPriority(4, 2) }),
			"<34>1 2026-03-04T05:06:07.123456Z web1 nginx - - - GET / 200"},
		{"configured default priority", SyslogConfig{DefaultPriority: 165}, ev(func(*relaykit.Event) {}),
			"<165>1 2026-03-04T05:06:07.123456Z web1 nginx - - - GET / 200"},
		{"priority zero from event", SyslogConfig{}, ev(func(e *relaykit.Event) { e.SetPriority(0, 0) }),
			"<0>1 2026-03-04T05:06:07.123456Z web1 nginx - - - GET / 200"},
		{"receive time fallback", SyslogConfig{}, ev(func(e *relaykit.Event) { e.Time, e.ReceiveTime = 0, 1e9 }),
			"<13>1 1970-01-01T00:00:01.000000Z web1 nginx - - - GET / 200"},
		{"no time", SyslogConfig{}, ev(func(e *relaykit.Event) { e.Time = 0 }),
			"<13>1 - web1 nginx - - - GET / 200"},
		{"defaults for host and app", SyslogConfig{AppName: "relay"}, ev(func(e *relaykit.Event) { e.Host, e.Source = nil, nil }),
			"<13>1 2026-03-04T05:06:07.123456Z relayhost relay - - - GET / 200"},
		{"header sanitised", SyslogConfig{}, ev(func(e *relaykit.Event) { e.Host, e.Source = []byte("a b\x00c"), []byte("ü") }),
			"<13>1 2026-03-04T05:06:07.123456Z a_b_c __ - - - GET / 200"},
		{"procid and msgid", SyslogConfig{ProcIDField: "pid", MsgIDField: "msgid"},
			ev(func(e *relaykit.Event) { e.SetFieldString("pid", "4711"); e.SetFieldString("msgid", "ID47") }),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx 4711 ID47 - GET / 200"},
		{"structured data escaped", SyslogConfig{StructuredData: []string{"user", "path", "missing"}},
			ev(func(e *relaykit.Event) { e.SetFieldString("path", `a"b\c]d`); e.SetFieldString("user", "bob") }),
			`<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - [relaykit@32473 user="bob" path="a\"b\\c\]d"] GET / 200`},
		{"structured data none present", SyslogConfig{StructuredData: []string{"x"}, SDID: "origin"}, ev(func(*relaykit.Event) {}),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - - GET / 200"},
		{"invalid utf8 in param", SyslogConfig{StructuredData: []string{"x"}, SDID: "meta@1"},
			ev(func(e *relaykit.Event) { e.SetFieldString("x", "a\xffb") }),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - [meta@1 x=\"a\uFFFDb\"] GET / 200"},
		{"empty message", SyslogConfig{}, ev(func(e *relaykit.Event) { e.Raw = nil }),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - -"},
		{"rfc3164", SyslogConfig{Format: SyslogRFC3164, ProcIDField: "pid"},
			ev(func(e *relaykit.Event) { e.SetFieldString("pid", "42"); e.Source = []byte("ng:x") }),
			"<13>Mar  4 05:06:07 web1 ng_x[42]: GET / 200"},
		{"rfc3164 no pid", SyslogConfig{Format: SyslogRFC3164}, ev(func(*relaykit.Event) {}),
			"<13>Mar  4 05:06:07 web1 nginx: GET / 200"},
		{"lf framing replaces newlines", SyslogConfig{Framing: SyslogNonTransparent}, ev(func(e *relaykit.Event) { e.Raw = []byte("a\nb\n") }),
			"<13>1 2026-03-04T05:06:07.123456Z web1 nginx - - - a b "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := testEncoder(tt.cfg)
			got := enc.appendMessage(nil, &tt.ev, 0)
			assert.Equal(t, tt.want, string(got))
			if tt.cfg.Format == SyslogRFC5424 {
				_, err := check5424(got)
				assert.NoError(t, err)
			}
		})
	}
}

func TestAppendTimestamp(t *testing.T) {
	for _, tt := range []struct {
		ns     int64
		digits int
		want   string
	}{
		{0, 6, "1970-01-01T00:00:00.000000Z"},
		{time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC).UnixNano(), 6, "2026-12-31T23:59:59.999999Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC).UnixNano(), 7, "2026-01-02T03:04:05.0000001Z"},
		{time.Date(1999, 1, 2, 3, 4, 5, 123456789, time.UTC).UnixNano(), 9, "1999-01-02T03:04:05.123456789Z"},
	} {
		assert.Equal(t, tt.want, string(appendTimestamp(nil, tt.ns, tt.digits)))
	}
}

func TestSyslogEncodeAllocs(t *testing.T) {
	enc := testEncoder(SyslogConfig{StructuredData: []string{"user"}, ProcIDField: "pid"})
	e := relaykit.Event{Time: 1, Host: []byte("h"), Source: []byte("a"), Raw: []byte("hello")}
	e.SetFieldString("user", `x"y`)
	e.SetFieldString("pid", "1")
	buf := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() { buf = enc.appendMessage(buf[:0], &e, 0) })
	assert.Zero(t, allocs)
}

func FuzzSyslogEncode5424(f *testing.F) {
	f.Add([]byte("host"), []byte("app"), []byte("1"), []byte("ID"), []byte(`v"]\`), []byte("msg"), int64(1), uint8(13))
	f.Add([]byte(""), []byte(""), []byte(""), []byte(""), []byte("\xff\xfe"), []byte("\x00\n"), int64(0), uint8(255))
	f.Add([]byte(" - "), []byte("[a]"), []byte("=\""), []byte("]]]"), []byte("\\\\"), []byte(""), int64(-1), uint8(191))
	enc := testEncoder(SyslogConfig{ProcIDField: "pid", MsgIDField: "msgid", StructuredData: []string{"v", "w"}})
	f.Fuzz(func(t *testing.T, host, app, pid, msgid, v, msg []byte, ts int64, pri uint8) {
		e := relaykit.Event{Time: ts, Host: host, Source: app, Raw: msg, Priority: pri}
		if pri&1 == 1 {
			e.Flags = relaykit.FlagPriority
		}
		e.SetField("pid", pid)
		e.SetField("msgid", msgid)
		e.SetField("v", v)
		out := enc.appendMessage(nil, &e, 0)
		p, err := check5424(out)
		require.NoError(t, err, "%q", out)
		if len(msg) > 0 {
			require.True(t, p.hasMsg)
			require.Equal(t, string(msg), p.msg)
		}
		if utf8.Valid(v) {
			require.Equal(t, string(v), p.params["v"]) // escaping round-trips
		}
	})
}
