package enrich

import (
	"net/netip"
	"unsafe"
)

// Byte classes used by the IP scanner.
const (
	clsRun   = 1 << iota // may appear in an IP address: hex digit, ':' or '.'
	clsDigit             // '0'-'9'
	clsWord              // letter, digit or '_': glued to an address, it is not one
)

var class = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = clsRun | clsDigit | clsWord
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsWord
		t[c-'a'+'A'] = clsWord
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] |= clsRun
		t[c-'a'+'A'] |= clsRun
	}
	t['_'] = clsWord
	t[':'] = clsRun
	t['.'] = clsRun
	return t
}()

// maxIPv6Len is the length of the longest IPv6 text form without a zone,
// "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".
const maxIPv6Len = 45

// FirstIPv4 returns the first IPv4 address in b, in dotted-quad form, and
// whether one was found. It never allocates. See [IndexIP] for what counts
// as an address.
func FirstIPv4(b []byte) (netip.Addr, bool) {
	a, _, _ := scanIP(b, true, nil)
	return a, a.IsValid()
}

// FirstIP returns the first IPv4 or IPv6 address in b and whether one was
// found. It never allocates. See [IndexIP] for what counts as an address.
func FirstIP(b []byte) (netip.Addr, bool) {
	a, _, _ := scanIP(b, false, nil)
	return a, a.IsValid()
}

// IndexIP returns the first IPv4 or IPv6 address in b and its position:
// b[start:end] is its text, which [netip.ParseAddr] parses to the same
// address. It returns the zero Addr and -1, -1 when b holds none. It never
// allocates.
//
// An address is a dotted quad (four decimal numbers 0-255 without leading
// zeros, as netip.ParseAddr requires) or an IPv6 address in any RFC 4291
// text form, including an embedded IPv4 suffix; zones ("%eth0") are not
// included. An address must stand alone as a word: a letter, digit, '_',
// '.' or ':' glued before it, or a letter, digit or '_' glued after it,
// means it is part of something else (a version number, a hostname, a
// longer dotted number) and is skipped, so "10.0.0.300", "1.2.3" and
// "1.2.3.4.5" yield nothing. A dotted quad may be followed by a port
// ("1.2.3.4:80") or end a sentence ("from 1.2.3.4."), and an IPv4 address
// may follow a colon ("client:1.2.3.4"); an IPv6 address may sit in
// brackets ("[2001:db8::1]:443").
func IndexIP(b []byte) (addr netip.Addr, start, end int) {
	return scanIP(b, false, nil)
}

// IndexIPv4 is [IndexIP] restricted to IPv4 addresses.
func IndexIPv4(b []byte) (addr netip.Addr, start, end int) {
	return scanIP(b, true, nil)
}

// AppendIPs appends every IPv4 and IPv6 address in b to dst, in order, and
// returns the extended slice. It allocates only when dst must grow. See
// [IndexIP] for what counts as an address.
func AppendIPs(dst []netip.Addr, b []byte) []netip.Addr {
	scanIP(b, false, &dst)
	return dst
}

// AllIPs returns every IPv4 and IPv6 address in b, in order, in a new slice
// (nil when there is none). Use [AppendIPs] with a reused slice on hot paths.
func AllIPs(b []byte) []netip.Addr {
	return AppendIPs(nil, b)
}

// scanIP finds addresses in b. With all == nil it returns the first one;
// otherwise it appends each one to *all and returns the zero Addr.
func scanIP(b []byte, v4only bool, all *[]netip.Addr) (netip.Addr, int, int) {
	n := len(b)
	i := 0
	for i < n {
		// Skip to the start of the next run of address characters.
		if class[b[i]]&clsRun == 0 {
			i++
			continue
		}
		s := i
		digits := false
		colons := false
		for i < n && class[b[i]]&clsRun != 0 {
			switch b[i] {
			case ':':
				colons = true
			case '.':
			default:
				if class[b[i]]&clsDigit != 0 {
					digits = true
				}
			}
			i++
		}
		e := i
		if !digits {
			continue
		}
		gluedBefore := s > 0 && class[b[s-1]]&clsWord != 0
		gluedAfter := e < n && class[b[e]]&clsWord != 0
		if !v4only && colons && !gluedBefore && !gluedAfter {
			if a, as, ae, ok := parseIPv6Run(b, s, e); ok {
				if all == nil {
					return a, as, ae
				}
				*all = append(*all, a)
				continue
			}
		}
		// IPv4 candidates: the start of the run (if not glued to a word)
		// and every position just after a ':' in it.
		for p := s; p < e; p++ {
			if p == s {
				if gluedBefore {
					continue
				}
			} else if b[p-1] != ':' {
				continue
			}
			if class[b[p]]&clsDigit == 0 {
				continue
			}
			a, ae, ok := parseIPv4At(b, p, e, gluedAfter)
			if !ok {
				continue
			}
			if all == nil {
				return a, p, ae
			}
			*all = append(*all, a)
			p = ae
		}
	}
	return netip.Addr{}, -1, -1
}

// parseIPv4At parses a dotted quad at b[p:], inside the run of address
// characters that ends at e. gluedAfter reports whether a word character
// follows the run. It returns the address and the end of its text.
func parseIPv4At(b []byte, p, e int, gluedAfter bool) (netip.Addr, int, bool) {
	var ip [4]byte
	for k := range 4 {
		if k > 0 {
			if p >= e || b[p] != '.' {
				return netip.Addr{}, 0, false
			}
			p++
		}
		start := p
		v := 0
		for p < e && p-start < 4 && class[b[p]]&clsDigit != 0 {
			v = v*10 + int(b[p]-'0')
			p++
		}
		l := p - start
		if l == 0 || l > 3 || v > 255 || (l > 1 && b[start] == '0') {
			return netip.Addr{}, 0, false
		}
		ip[k] = byte(v)
	}
	// What follows the quad: the end of the run, a port, or a final dot.
	if p == e {
		if gluedAfter {
			return netip.Addr{}, 0, false
		}
	} else {
		switch b[p] {
		case ':':
		case '.':
			// "1.2.3.4." ends a sentence; "1.2.3.4.5" or "1.2.3.4.a" is
			// something longer.
			if p+1 < e || gluedAfter {
				return netip.Addr{}, 0, false
			}
		default: // a hex digit glued to the quad
			return netip.Addr{}, 0, false
		}
	}
	return netip.AddrFrom4(ip), p, true
}

// parseIPv6Run parses the run b[s:e] (which contains a colon) as an IPv6
// address, trimming a trailing '.' or ':' (sentence punctuation, "addr:
// msg"). It also accepts an IPv4-mapped form such as "::ffff:1.2.3.4".
func parseIPv6Run(b []byte, s, e int) (netip.Addr, int, int, bool) {
	for range 2 {
		if e-s < 2 || e-s > maxIPv6Len {
			return netip.Addr{}, 0, 0, false
		}
		// A zero-copy string is safe: the text has no '%', so ParseAddr
		// keeps no reference to it (only zones are retained).
		a, err := netip.ParseAddr(unsafe.String(&b[s], e-s))
		if err == nil && a.Is6() {
			return a, s, e, true
		}
		if c := b[e-1]; c != '.' && c != ':' {
			break
		}
		e--
	}
	return netip.Addr{}, 0, 0, false
}
