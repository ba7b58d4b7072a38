package relp

import (
	"errors"
	"testing"
)

// FuzzRELPFrame checks the RELP frame parser for any input: it never
// panics; a frame it returns is well formed (txnr within 0..999999999, a
// command of 1 to 32 letters, data within the limit, the trailer last);
// no prefix of a frame is taken for a frame or an error (so read
// boundaries do not matter); errors wrap ErrProtocol or
// ErrTooLarge.
func FuzzRELPFrame(f *testing.F) {
	for _, s := range []string{
		"1 open 30 relp_version=0\ncommands=syslog\n", "2 syslog 5 hello\n", "3 close 0\n",
		"2 syslog 3 hello\n", "2 syslog 40 hello\n", "1234567890 syslog 1 x\n", "1 abcdefghijklmnopqrstuvwxyzabcdefg 0\n",
		"0 serverclose 0\n", "1 syslog 0 \n", "1 syslog 00005 hello\n", "GET / HTTP/1.1\r\n",
	} {
		f.Add([]byte(s), uint16(64))
	}
	f.Fuzz(func(t *testing.T, in []byte, maxData uint16) {
		md := int(maxData%4096) + 1
		b := in
		for len(b) > 0 {
			fr, n, err := parseRELP(b, md)
			if err != nil {
				if !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("error %v wraps neither sentinel", err)
				}
				return
			}
			if n == 0 {
				return // an incomplete frame
			}
			switch {
			case n > len(b):
				t.Fatalf("frame of %d bytes from %d", n, len(b))
			case fr.txnr < 0 || fr.txnr > relpMaxTxnr:
				t.Fatalf("txnr %d", fr.txnr)
			case len(fr.cmd) == 0 || len(fr.cmd) > relpMaxCommand:
				t.Fatalf("command %q", fr.cmd)
			case len(fr.data) > md:
				t.Fatalf("%d bytes of data, limit %d", len(fr.data), md)
			case b[n-1] != '\n':
				t.Fatalf("frame %q does not end with its trailer", b[:n])
			}
			if n <= 1024 {
				for k := range n {
					if _, m, err := parseRELP(b[:k], md); m != 0 || err != nil {
						t.Fatalf("prefix %q of frame %q: %d, %v", b[:k], b[:n], m, err)
					}
				}
			}
			b = b[n:]
		}
	})
}
