package sources

import (
	"net/netip"
	"strings"
)

// MaxHostLen is the longest host key, in bytes. Longer host names (253
// bytes is the longest DNS name) are cut to MaxHostLen before lookup, so a
// sender cannot make the tracker keep large keys.
const MaxHostLen = 255

// Key identifies a source: the sender's address, or the host named in its
// events. The zero Key is invalid.
//
// Address keys are kept unmapped (an IPv4-mapped IPv6 address such as
// ::ffff:192.0.2.1, what a dual-stack socket reports, is the same key as
// 192.0.2.1); the zone of a link-local address is part of the key. Host keys
// are compared byte for byte (case-sensitive) and cut to [MaxHostLen].
// An address key and a host key are never equal, even when the host is the
// address's text.
//
// Key is comparable and may be used as a map key.
type Key struct {
	addr   netip.Addr
	host   string
	isHost bool
}

// AddrKey returns the key of a sender's address.
func AddrKey(a netip.Addr) Key { return Key{addr: a.Unmap()} }

// HostKey returns the key of a host name, cut to [MaxHostLen] bytes.
func HostKey(host string) Key {
	if len(host) > MaxHostLen {
		host = host[:MaxHostLen]
	}
	return Key{host: host, isHost: true}
}

// ParseKey returns the address key of s when s is an IP address (as
// [netip.ParseAddr] reads it), and the host key of s otherwise. It is the
// usual way to turn a configured name into a Key; an input keyed by host
// whose events name hosts by address needs [HostKey] instead.
func ParseKey(s string) Key {
	if a, err := netip.ParseAddr(s); err == nil {
		return AddrKey(a)
	}
	return HostKey(s)
}

// IsValid reports whether k is an address key of a valid address or a host
// key (the empty host included).
func (k Key) IsValid() bool { return k.isHost || k.addr.IsValid() }

// Addr returns the address of an address key, and false for a host key.
func (k Key) Addr() (netip.Addr, bool) { return k.addr, !k.isHost && k.addr.IsValid() }

// Host returns the host of a host key, and false for an address key.
func (k Key) Host() (string, bool) { return k.host, k.isHost }

// String returns the address's or the host's text; "invalid Key" for the
// zero Key. An address key allocates its text on each call.
func (k Key) String() string {
	if k.isHost {
		return k.host
	}
	if !k.addr.IsValid() {
		return "invalid Key"
	}
	return k.addr.String()
}

// AppendTo appends the key's text (as [Key.String]) to b without other
// allocation than b's growth.
func (k Key) AppendTo(b []byte) []byte {
	if k.isHost {
		return append(b, k.host...)
	}
	if !k.addr.IsValid() {
		return append(b, "invalid Key"...)
	}
	return k.addr.AppendTo(b)
}

// Compare orders keys: address keys first, by address ([netip.Addr.Compare]),
// then host keys, byte-wise. It returns -1, 0 or +1.
func (k Key) Compare(o Key) int {
	if k.isHost != o.isHost {
		if !k.isHost {
			return -1
		}
		return 1
	}
	if k.isHost {
		return strings.Compare(k.host, o.host)
	}
	return k.addr.Compare(o.addr)
}
