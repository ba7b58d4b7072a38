package enrich_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
)

func TestJSONPath(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		max      int
		doc      string
		wantIP   string // "" means none
		wantVal  string
		wantFind bool
	}{
		{name: "top level", path: "ip", doc: `{"ip":"192.0.2.1"}`, wantIP: "192.0.2.1", wantVal: "192.0.2.1", wantFind: true},
		{name: "nested", path: "src.ip", doc: `{"src":{"ip":"2001:db8::1","port":22}}`, wantIP: "2001:db8::1", wantVal: "2001:db8::1", wantFind: true},
		{name: "deeply nested", path: "a.b.c.d", doc: `{"a":{"b":{"c":{"d":"198.51.100.7"}}}}`, wantIP: "198.51.100.7", wantVal: "198.51.100.7", wantFind: true},
		{name: "array index", path: "addrs.1", doc: `{"addrs":["192.0.2.1","192.0.2.2"]}`, wantIP: "192.0.2.2", wantVal: "192.0.2.2", wantFind: true},
		{name: "with port", path: "peer", doc: `{"peer":"192.0.2.1:443"}`, wantIP: "192.0.2.1", wantVal: "192.0.2.1:443", wantFind: true},
		{name: "escaped string", path: "user", doc: `{"user":"a\"b\u00e9"}`, wantVal: `a"bé`, wantFind: true},
		{name: "number value", path: "id", doc: `{"id":12345}`, wantVal: "12345", wantFind: true},
		{name: "bool value", path: "ok", doc: `{"ok":true}`, wantVal: "true", wantFind: true},
		{name: "object value", path: "o", doc: `{"o":{"k":1}}`, wantVal: `{"k":1}`, wantFind: true},
		{name: "not an address", path: "ip", doc: `{"ip":"10.0.0.300"}`, wantVal: "10.0.0.300", wantFind: true},
		{name: "missing field", path: "ip", doc: `{"src":"192.0.2.1"}`},
		{name: "missing nested", path: "src.ip", doc: `{"src":{"port":1}}`},
		{name: "parent not object", path: "src.ip", doc: `{"src":"192.0.2.1"}`},
		{name: "null", path: "ip", doc: `{"ip":null}`},
		{name: "invalid json", path: "ip", doc: `{"ip":"192.0.2.1"`},
		{name: "not json", path: "ip", doc: `ip=192.0.2.1`},
		{name: "empty", path: "ip", doc: ``},
		{name: "over the cap", path: "ip", max: 16, doc: `{"ip":"192.0.2.1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := enrich.NewJSONPath(tt.path, tt.max)
			require.NoError(t, err)
			assert.Equal(t, tt.path, p.String())
			ip, ok := p.IP([]byte(tt.doc))
			if tt.wantIP == "" {
				assert.False(t, ok)
			} else {
				assert.True(t, ok)
				assert.Equal(t, netip.MustParseAddr(tt.wantIP), ip)
			}
			got, ok := p.AppendValue([]byte("prefix:"), []byte(tt.doc))
			assert.Equal(t, tt.wantFind, ok)
			if tt.wantFind {
				assert.Equal(t, "prefix:"+tt.wantVal, string(got))
			} else {
				assert.Equal(t, "prefix:", string(got))
			}
		})
	}
}

func TestNewJSONPathErrors(t *testing.T) {
	for _, path := range []string{"", ".", "a..b", "a."} {
		_, err := enrich.NewJSONPath(path, 0)
		assert.ErrorIs(t, err, enrich.ErrInvalidConfig, path)
	}
	_, err := enrich.NewJSONPath("a", -1)
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
}

func TestJSONPathAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	p, err := enrich.NewJSONPath("src.ip", 0)
	require.NoError(t, err)
	doc := []byte(`{"time":"2024-05-01T12:00:00Z","src":{"ip":"192.0.2.1","port":22},"msg":"login \"failed\""}`)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := p.IP(doc); !ok {
			t.Fatal("no IP")
		}
		buf, _ = p.AppendValue(buf[:0], doc)
	})
	assert.Zero(t, allocs)
}

func TestEventIP(t *testing.T) {
	var e relaykit.Event
	e.Raw = []byte("Failed password from 198.51.100.3 port 22")
	e.SetFieldString("client", "[2001:db8::9]:443")
	e.SetFieldString("bad", "10.0.0.300")

	ip, ok := enrich.EventIP(&e, "")
	assert.True(t, ok)
	assert.Equal(t, netip.MustParseAddr("198.51.100.3"), ip)
	ip, ok = enrich.EventIP(&e, "client")
	assert.True(t, ok)
	assert.Equal(t, netip.MustParseAddr("2001:db8::9"), ip)
	_, ok = enrich.EventIP(&e, "bad")
	assert.False(t, ok)
	_, ok = enrich.EventIP(&e, "missing")
	assert.False(t, ok)

	var empty relaykit.Event
	_, ok = enrich.EventIP(&empty, "")
	assert.False(t, ok)
}
