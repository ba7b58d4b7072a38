package enrich_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/enrich"
)

var ipCases = []struct {
	name string
	in   string
	all  []string // every address, in order
	v4   string   // first IPv4; "" means none
}{
	{name: "empty", in: ""},
	{name: "no address", in: "Accepted password for root from somewhere port 22"},
	{name: "ipv4 alone", in: "10.0.0.1", all: []string{"10.0.0.1"}, v4: "10.0.0.1"},
	{name: "ipv4 in sshd line", in: "Failed password for invalid user admin from 203.0.113.45 port 51234 ssh2",
		all: []string{"203.0.113.45"}, v4: "203.0.113.45"},
	{name: "octet over 255", in: "host 10.0.0.300 down"},
	{name: "three octets", in: "version 1.2.3 released"},
	{name: "five octets", in: "oid 1.2.3.4.5 set"},
	{name: "leading zero", in: "addr 010.1.1.1"},
	{name: "zero address", in: "bind 0.0.0.0:80", all: []string{"0.0.0.0"}, v4: "0.0.0.0"},
	{name: "glued digit before", in: "x=91.2.3.4", all: []string{"91.2.3.4"}, v4: "91.2.3.4"},
	{name: "glued letter before", in: "v1.2.3.4", all: nil},
	{name: "glued letter after", in: "1.2.3.4x"},
	{name: "glued hex letter after", in: "1.2.3.4a"},
	{name: "glued dot before", in: ".1.2.3.4"},
	{name: "port", in: "connect to 192.0.2.1:8080 failed", all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
	{name: "sentence end", in: "connection from 192.0.2.1.", all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
	{name: "sentence end then more", in: "from 192.0.2.1. Next", all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
	{name: "after colon", in: "client:192.0.2.7 ok", all: []string{"192.0.2.7"}, v4: "192.0.2.7"},
	{name: "key=value", in: "src=192.0.2.1 dst=198.51.100.2", all: []string{"192.0.2.1", "198.51.100.2"}, v4: "192.0.2.1"},
	{name: "comma list", in: "[192.0.2.1,198.51.100.2]", all: []string{"192.0.2.1", "198.51.100.2"}, v4: "192.0.2.1"},
	{name: "quoted json", in: `{"ip":"192.0.2.1"}`, all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
	{name: "ipv6 compressed", in: "from 2001:db8::1 port 22", all: []string{"2001:db8::1"}},
	{name: "ipv6 brackets port", in: "GET [2001:db8::1]:443", all: []string{"2001:db8::1"}},
	{name: "ipv6 full", in: "a 2001:0db8:0000:0000:0000:ff00:0042:8329 b", all: []string{"2001:db8::ff00:42:8329"}},
	{name: "ipv6 loopback", in: "listen ::1", all: []string{"::1"}},
	{name: "ipv6 mapped ipv4", in: "peer ::ffff:192.0.2.1 x", all: []string{"::ffff:192.0.2.1"}, v4: "192.0.2.1"},
	{name: "ipv6 zone", in: "link fe80::1%eth0 up", all: []string{"fe80::1"}},
	{name: "ipv6 then colon", in: "2001:db8::2: refused", all: []string{"2001:db8::2"}},
	{name: "ipv6 sentence end", in: "from 2001:db8::3.", all: []string{"2001:db8::3"}},
	{name: "ipv6 glued letter", in: "x2001:db8::1"},
	{name: "bare double colon", in: "a :: b"},
	{name: "time is not ipv6", in: "at 12:34:56 ok"},
	{name: "mac is not ipv6", in: "mac 00:1a:2b:3c:4d:5e"},
	{name: "cpp scope", in: "std::vector failed"},
	{name: "ipv6 then ipv4", in: "2001:db8::1 -> 192.0.2.9", all: []string{"2001:db8::1", "192.0.2.9"}, v4: "192.0.2.9"},
	{name: "timestamp before ip", in: "2024-05-01T12:00:00Z 192.0.2.1", all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
	{name: "ipv4 with port in run", in: "1.2.3.4:80:5.6.7.8", all: []string{"1.2.3.4", "5.6.7.8"}, v4: "1.2.3.4"},
	{name: "non-ascii around", in: "é192.0.2.1é", all: []string{"192.0.2.1"}, v4: "192.0.2.1"},
}

func TestExtractIPs(t *testing.T) {
	for _, tt := range ipCases {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			var want []netip.Addr
			for _, s := range tt.all {
				want = append(want, netip.MustParseAddr(s))
			}
			assert.Equal(t, want, enrich.AllIPs(in))

			first, ok := enrich.FirstIP(in)
			if len(want) == 0 {
				assert.False(t, ok)
				assert.False(t, first.IsValid())
			} else {
				assert.True(t, ok)
				assert.Equal(t, want[0], first)
			}

			v4, ok := enrich.FirstIPv4(in)
			if tt.v4 == "" {
				assert.False(t, ok)
			} else {
				assert.True(t, ok)
				assert.Equal(t, netip.MustParseAddr(tt.v4), v4)
			}

			a, start, end := enrich.IndexIP(in)
			if len(want) == 0 {
				assert.Equal(t, []int{-1, -1}, []int{start, end})
			} else {
				require.GreaterOrEqual(t, start, 0)
				assert.Equal(t, want[0], a)
				assert.Equal(t, want[0], netip.MustParseAddr(tt.in[start:end]))
			}
		})
	}
}

func TestExtractIPAllocs(t *testing.T) {
	line := []byte("May  1 12:00:00 host sshd[123]: Failed password for root from 203.0.113.45 port 51234 ssh2 via [2001:db8::7]:22")
	dst := make([]netip.Addr, 0, 4)
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = enrich.FirstIPv4(line)
		_, _ = enrich.FirstIP(line)
		dst = enrich.AppendIPs(dst[:0], line)
	})
	assert.Zero(t, allocs)
	assert.Len(t, dst, 2)
}

// FuzzIndexIP checks that whatever the scanner returns is exactly what
// netip.ParseAddr makes of the text it points at, and that AppendIPs and
// FirstIPv4 agree with it.
func FuzzIndexIP(f *testing.F) {
	for _, tt := range ipCases {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte("::ffff:1.2.3.4:80"))
	f.Add([]byte("1.2.3.4.:5"))
	f.Add([]byte("1:2:3:4:5:6:1.2.3.4"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, start, end := enrich.IndexIP(b)
		// An input that is exactly one address (no zone) is found whole.
		if p, err := netip.ParseAddr(string(b)); err == nil && p.Zone() == "" && string(b) != "::" {
			if start != 0 || end != len(b) || a != p {
				t.Fatalf("input %q is the address %v, IndexIP returned %v at [%d:%d]", b, p, a, start, end)
			}
		}
		if start < 0 {
			if a.IsValid() || end != -1 {
				t.Fatalf("no match but addr %v end %d", a, end)
			}
			if len(enrich.AllIPs(b)) != 0 {
				t.Fatalf("IndexIP found nothing, AllIPs found %v", enrich.AllIPs(b))
			}
			return
		}
		p, err := netip.ParseAddr(string(b[start:end]))
		if err != nil {
			t.Fatalf("returned %q at [%d:%d], which does not parse: %v", b[start:end], start, end, err)
		}
		if p != a {
			t.Fatalf("returned %v for %q, ParseAddr says %v", a, b[start:end], p)
		}
		all := enrich.AllIPs(b)
		if len(all) == 0 || all[0] != a {
			t.Fatalf("AllIPs %v does not start with %v", all, a)
		}
		v4, s4, e4 := enrich.IndexIPv4(b)
		if s4 >= 0 {
			p4, err := netip.ParseAddr(string(b[s4:e4]))
			if err != nil || p4 != v4 || !v4.Is4() {
				t.Fatalf("IndexIPv4 returned %v for %q (%v)", v4, b[s4:e4], err)
			}
		}
	})
}
