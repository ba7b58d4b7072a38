package jsonenc_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relaykit/relaykit/internal/jsonenc"
)

// appendStringBytewise is the encoder this package had before the
// word-at-a-time scan, one table lookup per byte; kept as the benchmark
// baseline. It differs from encoding/json only in writing \b and \f as
// \u0008 and \u000c.
func appendStringBytewise(dst []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\\ufffd"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// BenchmarkAppendString compares the word-at-a-time encoder with the
// byte-at-a-time baseline on the inputs the sinks see: a syslog message
// (ASCII, no escapes), short field values, a JSON-in-a-string message
// (quotes to escape) and non-ASCII text.
func BenchmarkAppendString(b *testing.B) {
	inputs := []struct{ name, s string }{
		{"ascii-200B", "Nov 22 02:11:09 host-12 sshd[2211]: Failed password for invalid user admin from 203.0.113.45 port 52113 ssh2; session=4f2a9c1e user_agent=OpenSSH_8.9p1 Debian-3 attempt=3 of 6 policy=deny"},
		{"field-12B", "Frankfurt am"},
		{"quoted-json-180B", `{"level":"error","msg":"upstream timed out","path":"/api/v1/orders","status":504,"ms":30001,"client":"198.51.100.23","trace":"a9f3c2d1e0"}`},
		{"utf8-120B", strings.Repeat("Grüße aus Köln — ", 6)},
	}
	impls := []struct {
		name string
		fn   func([]byte, []byte) []byte
	}{{"impl=word", jsonenc.AppendString}, {"impl=bytewise", appendStringBytewise}}
	for _, in := range inputs {
		s := []byte(in.s)
		for _, impl := range impls {
			b.Run("in="+in.name+"/"+impl.name, func(b *testing.B) {
				dst := make([]byte, 0, 4*len(s)+2)
				b.SetBytes(int64(len(s)))
				b.ReportAllocs()
				for b.Loop() {
					dst = impl.fn(dst[:0], s)
				}
				if len(dst) < len(s)+2 {
					b.Fatalf("encoded %d bytes into %d", len(s), len(dst))
				}
			})
		}
	}
}
