package forward_test

import (
	"encoding/json"
	"math"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/relaykit/relaykit/forward"
)

func TestTypedValues(t *testing.T) {
	for _, c := range []struct {
		in          string
		int32, real bool
	}{
		{"0", true, true}, {"-0", true, true}, {"2147483647", true, true}, {"-2147483648", true, true},
		{"2147483648", false, true}, {"007", true, false}, {"1.5", false, true}, {"1e3", false, true},
		{"1.", false, false}, {".5", false, false}, {"+1", false, false}, {"", false, false}, {"-", false, false},
		{"1e307", false, true}, {"9.9e307", false, true}, {"1e308", false, false}, {"0.000001e310", false, true},
		{"1e-400", false, true}, {"NaN", false, false}, {"0x10", false, false}, {" 1", false, false},
	} {
		_, ok := forward.ParseInt([]byte(c.in), 32)
		assert.Equal(t, c.int32, ok, "int %q", c.in)
		assert.Equal(t, c.real, forward.IsJSONNumber([]byte(c.in)), "real %q", c.in)
	}
	n, ok := forward.ParseInt([]byte("-9223372036854775808"), 64)
	assert.True(t, ok)
	assert.Equal(t, int64(math.MinInt64), n)
	_, ok = forward.ParseInt([]byte("9223372036854775808"), 64)
	assert.False(t, ok)
	for in, want := range map[string]bool{
		"10.0.0.1": true, "192.0.2.255": true, "2001:db8::7": true, "::1": true, "fe80::1%eth0": false,
		"256.0.0.1": false, "10.0.0": false, "10.0.0.01": true, "host": false, "cafe": false, "a.b.c.d": false, "1.2.3.4.5": false,
	} {
		assert.Equal(t, want, forward.IsIPAddress([]byte(in)), in)
	}
}

// FuzzTypedValues: a value goes to an int, long or real column only if
// encoding/json and strconv read it as one (the DCR server's and the
// service's reading).
func FuzzTypedValues(f *testing.F) {
	for _, s := range []string{"0", "-12", "1.5e3", "1e308", "00", "-0.0", "4294967296", "1e-99999999999", "10.0.0.1", "::1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if forward.IsJSONNumber(b) {
			var n json.Number
			if assert.NoError(t, json.Unmarshal(b, &n), "%q", b) {
				_, err := n.Float64()
				assert.NoError(t, err, "%q", b)
			}
		}
		for _, bits := range []int{32, 64} {
			if v, ok := forward.ParseInt(b, bits); ok {
				w, err := strconv.ParseInt(string(b), 10, bits)
				assert.NoError(t, err, "%q", b)
				assert.Equal(t, w, v)
			}
		}
		// Every address netip reads (without a zone) is taken for one.
		if a, err := netip.ParseAddr(string(b)); err == nil && a.Zone() == "" {
			assert.True(t, forward.IsIPAddress(b), "%q", b)
		}
	})
}
