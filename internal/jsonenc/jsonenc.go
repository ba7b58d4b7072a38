// Package jsonenc holds the append-style JSON string encoder shared by the
// sinks and the archive. It never allocates beyond growing dst.
package jsonenc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safe reports the bytes that go into a JSON string as they are:
// printable ASCII except the quote and the backslash.
var safe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsb = 0x0101010101010101 // 0x01 in every byte
	msb = 0x8080808080808080 // 0x80 in every byte
)

// special returns a word whose lowest set bit lies in the first
// (lowest-addressed) byte of the little-endian word w that is not safe: a
// control byte (< 0x20), '"', '\\' or a byte of a multi-byte UTF-8
// sequence (>= 0x80). It returns 0 when all eight bytes are safe.
//
// For a byte b < 0x80, b+0x60 has its top bit set exactly when b >= 0x20,
// and (b^'"')+0x7f exactly when b != '"' (likewise for '\\'); no byte
// below 0x80 carries into the next. A byte >= 0x80 is flagged by its own
// top bit and may carry into the bytes above it, so flags above the first
// unsafe byte can be wrong, but never one below it.
func special(w uint64) uint64 {
	return (^ok(w) | w) & msb
}

// ok has the top bit of each byte of w below 0x80 set when the byte is
// safe (see special).
func ok(w uint64) uint64 {
	return (w + lsb*0x60) & ((w ^ lsb*'"') + lsb*0x7f) & ((w ^ lsb*'\\') + lsb*0x7f)
}

// scan returns the index of the first byte of s at or after i that is not
// safe, or len(s). It tests the next eight bytes first (escapes often come
// in clusters), then thirty-two, then eight at a time.
func scan(s []byte, i int) int {
	if i+8 <= len(s) {
		if m := special(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i+32 <= len(s); i += 32 {
		b := s[i : i+32 : i+32]
		w0 := binary.LittleEndian.Uint64(b[0:])
		w1 := binary.LittleEndian.Uint64(b[8:])
		w2 := binary.LittleEndian.Uint64(b[16:])
		w3 := binary.LittleEndian.Uint64(b[24:])
		// special(w0)|...|special(w3), with the negation and masks shared.
		if (^(ok(w0)&ok(w1)&ok(w2)&ok(w3))|w0|w1|w2|w3)&msb != 0 {
			break // the eight-byte loop below finds it
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := special(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s) && safe[s[i]]; i++ {
	}
	return i
}

// AppendString appends s as a JSON string (RFC 8259), quotes included.
// The bytes appended are those of encoding/json with HTML escaping off
// (json.Encoder.SetEscapeHTML(false)) for string(s): '"' and '\\' are
// escaped with a backslash, \b \f \n \r \t by name, other control
// characters as \u00XX, U+2028 and U+2029 as \u2028 and \u2029, and each
// byte of invalid UTF-8 becomes \ufffd, so the output is always valid JSON
// and valid UTF-8.
func AppendString(dst []byte, s []byte) []byte {
	dst, _ = AppendStringChecked(dst, s)
	return dst
}

// AppendStringChecked is [AppendString] that also reports whether s was
// valid UTF-8: false means at least one byte became \ufffd, so the string
// decodes to something other than s.
func AppendStringChecked(dst []byte, s []byte) (out []byte, valid bool) {
	valid = true
	dst = append(dst, '"')
	start := 0
	for i := 0; ; {
		if i < len(s) && safe[s[i]] { // skip the scan right after an escape
			i = scan(s, i+1)
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
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
		if c >= 0xc2 && c <= 0xdf && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			i += 2 // a valid two-byte sequence (U+0080 to U+07FF) stays as it is
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\\ufffd"...)
			valid = false
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
	return append(dst, '"'), valid
}
