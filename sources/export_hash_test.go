package sources

// HashText is hashText of s given as a string (a Key's host) and as bytes
// (an event's host), for the host-key tests.
func HashText(k0, k1 uint64, s string) (fromString, fromBytes uint64) {
	return hashText(k0, k1, textBytes(s)), hashText(k0, k1, []byte(s))
}
