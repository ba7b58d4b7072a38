package parse_test

import (
	"math"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		typ      parse.Type
		in, want string // want "": not of the type
	}{
		{parse.TypeInt, "443", "443"}, {parse.TypeInt, " +0443 ", "443"}, {parse.TypeInt, "-7", "-7"},
		{parse.TypeInt, "0x400000", "4194304"}, {parse.TypeInt, "9223372036854775807", "9223372036854775807"},
		{parse.TypeInt, "-9223372036854775808", "-9223372036854775808"}, {parse.TypeInt, "9223372036854775808", ""},
		{parse.TypeInt, "12a", ""}, {parse.TypeInt, "", ""}, {parse.TypeInt, "-", ""}, {parse.TypeInt, "0x", ""},
		{parse.TypeFloat, "1.50", "1.5"}, {parse.TypeFloat, "1e3", "1000"}, {parse.TypeFloat, "-0.25", "-0.25"},
		{parse.TypeFloat, "NaN", ""}, {parse.TypeFloat, "Inf", ""}, {parse.TypeFloat, "1e999", ""}, {parse.TypeFloat, "x", ""},
		{parse.TypeBool, "TRUE", "true"}, {parse.TypeBool, "no", "false"}, {parse.TypeBool, "1", "true"},
		{parse.TypeBool, "Off", "false"}, {parse.TypeBool, "maybe", ""},
		{parse.TypeIP, "10.0.0.1", "10.0.0.1"}, {parse.TypeIP, "2001:DB8:0:0::1", "2001:db8::1"},
		{parse.TypeIP, "::ffff:10.0.0.1", "10.0.0.1"}, {parse.TypeIP, "[2001:db8::1]", "2001:db8::1"},
		{parse.TypeIP, "fe80::1%eth0", "fe80::1%eth0"}, {parse.TypeIP, "10.0.0.256", ""}, {parse.TypeIP, "N/A", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ)+"/"+tt.in, func(t *testing.T) {
			step, err := parse.NewConvert(parse.ConvertConfig{Fields: map[string]parse.Type{"v": tt.typ}})
			require.NoError(t, err)
			var e relaykit.Event
			e.SetFieldString("v", tt.in)
			_, err = step.Apply(&e)
			got, _ := e.Field("v")
			if tt.want == "" {
				assert.ErrorIs(t, err, parse.ErrConvert)
				assert.Equal(t, tt.in, string(got), "left as it was")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestConvertRemoveInvalidAndStats(t *testing.T) {
	step, err := parse.NewConvert(parse.ConvertConfig{
		Fields:        map[string]parse.Type{"dpt": parse.TypeInt, "src": parse.TypeIP, "missing": parse.TypeBool},
		RemoveInvalid: true,
	})
	require.NoError(t, err)
	var e relaykit.Event
	e.SetFieldString("src", "unknown")
	e.SetFieldString("dpt", "0443")
	e.SetFieldString("x", "1")
	_, err = step.Apply(&e)
	assert.ErrorIs(t, err, parse.ErrConvert)
	assert.Equal(t, [][2]string{{"dpt", "443"}, {"x", "1"}}, fieldPairs(&e))
	assert.Equal(t, parse.ConvertStats{Events: 1, Converted: 1, Failed: 1, Missing: 1}, step.Stats())

	for _, bad := range []parse.ConvertConfig{{}, {Fields: map[string]parse.Type{"a": "uuid"}}} {
		_, err := parse.NewConvert(bad)
		assert.ErrorIs(t, err, parse.ErrInvalidConfig)
	}
}

// FuzzConvert checks each type against the standard library: the
// canonical text reads back as the same value.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"443", "-1", "0x10", "1.5", "1e3", "true", "10.0.0.1", "2001:db8::1", "::ffff:1.2.3.4", "", " 7 "} {
		f.Add(s)
	}
	step, err := parse.NewConvert(parse.ConvertConfig{Fields: map[string]parse.Type{
		"i": parse.TypeInt, "f": parse.TypeFloat, "b": parse.TypeBool, "ip": parse.TypeIP,
	}})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, v string) {
		var e relaykit.Event
		for _, k := range []string{"i", "f", "b", "ip"} {
			e.SetFieldString(k, v)
		}
		_, _ = step.Apply(&e)
		trimmed := strings.Trim(v, " \t")
		if got, _ := e.Field("i"); string(got) != v || v == "0" {
			n, err := strconv.ParseInt(string(got), 10, 64)
			require.NoError(t, err, "%q → %q", v, got)
			if want, err := strconv.ParseInt(strings.TrimPrefix(trimmed, "+"), 0, 64); err == nil && !strings.HasPrefix(strings.TrimLeft(trimmed, "+-"), "0") {
				require.Equal(t, want, n)
			}
		}
		if got, _ := e.Field("f"); string(got) != v {
			x, err := strconv.ParseFloat(string(got), 64)
			require.NoError(t, err)
			want, _ := strconv.ParseFloat(trimmed, 64)
			require.False(t, math.IsInf(x, 0) || math.IsNaN(x))
			require.Equal(t, want, x)
		}
		if got, _ := e.Field("ip"); string(got) != v {
			a, err := netip.ParseAddr(string(got))
			require.NoError(t, err)
			if len(trimmed) > 2 && trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']' {
				trimmed = trimmed[1 : len(trimmed)-1]
			}
			want, err := netip.ParseAddr(trimmed)
			require.NoError(t, err)
			require.Equal(t, want.Unmap(), a)
		}
	})
}
