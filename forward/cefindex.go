package forward

// cefTable finds a CEF key's index in cefColumns: open addressing over
// 512 one-byte slots (index+1, 0 empty) by an FNV-1a hash of the key, so a
// lookup hashes the key's few bytes and compares one or two candidates. It
// replaces a map[string]int whose lookups were half the cost of a
// CommonSecurityLog row (one per field, some 45 per firewall record). It
// is built once and only read, so it is safe for concurrent use.
type cefTable [512]uint8

var cefLookupTable = func() (t cefTable) {
	if len(cefColumns) > 255 {
		panic("forward: too many CommonSecurityLog columns for cefTable")
	}
	for i, c := range cefColumns {
		h := cefHash([]byte(c.field))
		for t[h] != 0 {
			h = (h + 1) & (len(t) - 1)
		}
		t[h] = uint8(i + 1)
	}
	return t
}()

func cefHash(key []byte) int {
	h := uint32(2166136261)
	for _, c := range key {
		h = (h ^ uint32(c)) * 16777619
	}
	return int(h^h>>16) & (len(cefTable{}) - 1)
}

// cefLookup returns the index in cefColumns of the column for the field
// key, and whether there is one.
func cefLookup(key []byte) (int, bool) {
	t := &cefLookupTable
	for h := cefHash(key); t[h] != 0; h = (h + 1) & (len(t) - 1) {
		if i := int(t[h]) - 1; cefColumns[i].field == string(key) {
			return i, true
		}
	}
	return 0, false
}
