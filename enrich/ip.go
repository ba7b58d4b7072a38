package enrich

import "net/netip"

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
// text form, including an embedded IPv4 suffix. Zones ("%eth0") are not
// included, and "::" alone is taken for punctuation. An address must stand
// alone as a word: a letter, digit or '_' glued to either side, or a
// '.' glued before it, means it is part of something else (a version
// number, a hostname, a longer dotted number) and it is skipped, so
// "10.0.0.300", "1.2.3" and "1.2.3.4.5" yield nothing. A dotted quad may
// follow a colon ("client:1.2.3.4"), be followed by a port ("1.2.3.4:80"),
// or end a sentence ("from 1.2.3.4."); an IPv6 address may sit in brackets
// ("[2001:db8::1]:443").
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
		var seen uint8 // clsDigit if a decimal digit, clsRun if a hex digit
		colons := false
		for i < n {
			c := b[i]
			cl := class[c]
			if cl&clsRun == 0 {
				break
			}
			if c == ':' {
				colons = true
			} else if c != '.' {
				seen |= clsRun | cl&clsDigit
			}
			i++
		}
		e := i
		// A dotted quad needs a decimal digit; an IPv6 address needs a
		// colon and a hex digit ("::" alone is punctuation). Words made of
		// hex letters ("face", "Accepted") are dropped here.
		if seen&clsDigit == 0 && !(colons && seen != 0) {
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
		if a, ok := parseIPv6(b[s:e]); ok {
			return a, s, e, true
		}
		if c := b[e-1]; c != '.' && c != ':' {
			break
		}
		e--
	}
	return netip.Addr{}, 0, 0, false
}

// parseIPv6 parses all of s as an IPv6 address in RFC 4291 text form
// without a zone, accepting exactly what netip.ParseAddr accepts, but
// without allocating an error on failure.
func parseIPv6(s []byte) (netip.Addr, bool) {
	var ip [16]byte
	ellipsis := -1 // position of "::" in ip, if any
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if len(s) == 0 {
			return netip.IPv6Unspecified(), true
		}
	}
	i := 0
	for i < 16 {
		off := 0
		acc := uint32(0)
		for ; off < len(s); off++ {
			c := s[off]
			switch {
			case c >= '0' && c <= '9':
				acc = acc<<4 + uint32(c-'0')
			case c >= 'a' && c <= 'f':
				acc = acc<<4 + uint32(c-'a'+10)
			case c >= 'A' && c <= 'F':
				acc = acc<<4 + uint32(c-'A'+10)
			default:
				goto groupEnd
			}
			if off > 3 || acc > 0xffff {
				return netip.Addr{}, false
			}
		}
	groupEnd:
		if off == 0 {
			return netip.Addr{}, false
		}
		if off < len(s) && s[off] == '.' {
			// A trailing IPv4 address takes the last four bytes.
			if (ellipsis < 0 && i != 12) || i+4 > 16 {
				return netip.Addr{}, false
			}
			v4, ok := parseIPv4Exact(s)
			if !ok {
				return netip.Addr{}, false
			}
			a4 := v4.As4()
			copy(ip[i:], a4[:])
			s = nil
			i += 4
			break
		}
		ip[i] = byte(acc >> 8)
		ip[i+1] = byte(acc)
		i += 2
		s = s[off:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return netip.Addr{}, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return netip.Addr{}, false
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return netip.Addr{}, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return netip.Addr{}, false
		}
		n := 16 - i
		for j := i - 1; j >= ellipsis; j-- {
			ip[j+n] = ip[j]
		}
		clear(ip[ellipsis : ellipsis+n])
	} else if ellipsis >= 0 {
		// "::" must stand for at least one group of zeros.
		return netip.Addr{}, false
	}
	return netip.AddrFrom16(ip), true
}

// parseIPv4Exact parses all of s as a dotted quad.
func parseIPv4Exact(s []byte) (netip.Addr, bool) {
	a, end, ok := parseIPv4At(s, 0, len(s), false)
	if !ok || end != len(s) {
		return netip.Addr{}, false
	}
	return a, true
}
