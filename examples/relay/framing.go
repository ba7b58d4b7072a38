package main

import (
	"bytes"
	"errors"
	"io"
)

// framer splits a syslog byte stream into frames, detecting the framing per
// frame (RFC 6587):
//
//   - octet counting: "LEN SP MSG", recognised when the frame starts with a
//     non-zero digit, at most 10 digits, a space and then '<' (the PRI of
//     the message), so a line without PRI that starts with a number is not
//     mistaken for a length;
//   - non-transparent framing: MSG terminated by LF or NUL; a trailing CR is
//     removed (CRLF senders).
//
// The framer enforces the maximum message size itself with bounded memory:
// its buffer never grows past max plus a small header allowance. A frame
// longer than max is cut at max (reported as truncated); the rest of it is
// discarded: up to the announced length for octet counting, or up to the
// next delimiter for non-transparent framing, however long that is.
//
// A framer is used by one goroutine; the returned frame is valid only until
// the next call to Next.
type framer struct {
	r          io.Reader
	buf        []byte
	start, end int
	max        int
	octets     bool // detect octet counting; false: delimiters only (JSON lines)

	skip        int64 // bytes still to discard of an oversized octet-counted frame
	skipToDelim bool  // discard until the next delimiter (oversized LF frame)
	err         error // sticky read error, returned once the buffer is empty

	truncated int64 // frames cut at max
	discarded int64 // bytes thrown away after a cut
}

const (
	framerInitial = 4 << 10
	framerHeader  = 16 // room for "LEN SP" in front of a max-sized frame
)

func newFramer(r io.Reader, maxSize int, octetCounting bool) *framer {
	f := &framer{r: r, max: maxSize, octets: octetCounting}
	f.buf = make([]byte, min(framerInitial, maxSize+framerHeader))
	return f
}

// fill reads more data into the buffer, compacting and growing it (up to
// max+header) as needed. It returns false when no more data can come.
func (f *framer) fill() bool {
	if f.err != nil {
		return false
	}
	if f.start > 0 && f.start == f.end {
		f.start, f.end = 0, 0
	}
	if f.end == len(f.buf) {
		if f.start > 0 {
			n := copy(f.buf, f.buf[f.start:f.end])
			f.start, f.end = 0, n
		} else if limit := f.max + framerHeader; len(f.buf) < limit {
			nb := make([]byte, min(2*len(f.buf), limit))
			copy(nb, f.buf[:f.end])
			f.buf = nb
		}
	}
	if f.end == len(f.buf) {
		// Buffer full of an unfinished frame at its limit: the caller cuts.
		return true
	}
	for range 100 {
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		if err != nil {
			f.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	f.err = io.ErrNoProgress
	return false
}

func isDelim(c byte) bool { return c == '\n' || c == 0 }

// indexDelim returns the index of the first LF or NUL in b, or -1. Two
// IndexByte scans (vectorised) beat one IndexAny over a two-byte set.
func indexDelim(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, 0)
	}
	if z := bytes.IndexByte(b[:i], 0); z >= 0 {
		return z
	}
	return i
}

// Next returns the next frame and whether it was cut at the size limit.
// At the end of the stream it returns io.EOF (or the read error).
func (f *framer) Next() ([]byte, bool, error) {
	for {
		if !f.discard() {
			return nil, false, f.finalErr()
		}
		// Skip empty frames and stray delimiters between frames.
		for f.start < f.end && (isDelim(f.buf[f.start]) || f.buf[f.start] == '\r') {
			f.start++
		}
		if f.start == f.end {
			if !f.fill() {
				return nil, false, f.finalErr()
			}
			continue
		}
		if f.octets {
			if n, hdr, ok := f.octetHeader(); ok {
				return f.octetFrame(n, hdr)
			} else if hdr < 0 {
				// Need more bytes to decide.
				if f.fill() {
					continue
				}
			}
		}
		if frame, cut, ok := f.delimFrame(); ok {
			return frame, cut, nil
		}
		if !f.fill() {
			// End of stream: a last frame without delimiter is still a frame;
			// after a read error (deadline, reset) it is an incomplete one.
			if f.start < f.end && errors.Is(f.err, io.EOF) {
				frame := bytes.TrimSuffix(f.buf[f.start:f.end], []byte{'\r'})
				f.start = f.end
				return frame, false, nil
			}
			return nil, false, f.finalErr()
		}
	}
}

func (f *framer) finalErr() error {
	if f.err == nil || errors.Is(f.err, io.EOF) {
		return io.EOF
	}
	return f.err
}

// discard drops the rest of an oversized frame. It reports false when the
// stream ended while discarding.
func (f *framer) discard() bool {
	for f.skip > 0 {
		if f.start == f.end && !f.fill() {
			return false
		}
		n := min(int64(f.end-f.start), f.skip)
		f.start += int(n)
		f.skip -= n
		f.discarded += n
	}
	for f.skipToDelim {
		if f.start == f.end && !f.fill() {
			return false
		}
		data := f.buf[f.start:f.end]
		i := indexDelim(data)
		if i >= 0 {
			f.discarded += int64(i)
			f.start += i + 1
			f.skipToDelim = false
			break
		}
		f.discarded += int64(len(data))
		f.start = f.end
	}
	return true
}

// octetHeader parses "LEN SP <" at the start of the buffer. hdr is the
// header length; ok false with hdr -1 means more bytes are needed to decide.
func (f *framer) octetHeader() (n int64, hdr int, ok bool) {
	data := f.buf[f.start:f.end]
	if data[0] < '1' || data[0] > '9' {
		return 0, 0, false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c >= '0' && c <= '9':
			if i >= 10 {
				return 0, 0, false
			}
			n = n*10 + int64(c-'0')
		case c == ' ':
			if i+1 >= len(data) {
				return 0, -1, false
			}
			if data[i+1] != '<' {
				return 0, 0, false
			}
			return n, i + 1, true
		default:
			return 0, 0, false
		}
	}
	if f.err != nil {
		return 0, 0, false
	}
	return 0, -1, false
}

func (f *framer) octetFrame(n int64, hdr int) ([]byte, bool, error) {
	f.start += hdr
	want := n
	cut := false
	if want > int64(f.max) {
		want = int64(f.max)
		cut = true
	}
	for int64(f.end-f.start) < want {
		if !f.fill() {
			// Stream ended inside the frame: deliver what arrived, marked cut.
			frame := f.buf[f.start:f.end]
			f.start = f.end
			if len(frame) == 0 || !errors.Is(f.err, io.EOF) {
				return nil, false, f.finalErr()
			}
			f.truncated++
			return frame, true, nil
		}
	}
	frame := f.buf[f.start : f.start+int(want)]
	f.start += int(want)
	if cut {
		f.truncated++
		f.skip = n - want
	}
	// Some senders end octet-counted frames with LF too; Next skips it.
	return bytes.TrimRight(frame, "\r\n"), cut, nil
}

// delimFrame returns the next LF/NUL terminated frame if the buffer holds
// one, or the first max bytes of an oversized frame.
func (f *framer) delimFrame() ([]byte, bool, bool) {
	data := f.buf[f.start:f.end]
	limit := min(len(data), f.max+1)
	if i := indexDelim(data[:limit]); i >= 0 && i <= f.max {
		f.start += i + 1
		return bytes.TrimSuffix(data[:i], []byte{'\r'}), false, true
	}
	// Cut only with max+1 bytes in hand: a frame of exactly max bytes may
	// still be followed by its delimiter.
	if len(data) > f.max {
		frame := data[:f.max]
		f.start += f.max
		f.truncated++
		f.skipToDelim = true
		return frame, true, true
	}
	return nil, false, false
}
