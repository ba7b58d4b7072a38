package forward_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// TestHECOverrideEventMeta checks each metadata setting: by default it
// fills only an empty event value; with OverrideEventMeta a set value
// replaces the event's, and an unset one leaves the event's alone.
func TestHECOverrideEventMeta(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	type meta struct{ host, source, sourceType, index string }
	get := func(e forwardtest.HECEvent) meta { return meta{e.Host, e.Source, e.SourceType, e.Index} }
	event := meta{"web-1", "sshd", "syslog", "main"}
	tests := []struct {
		name     string
		cfg      forward.HECConfig
		event    meta
		want     meta
		override bool
	}{
		{"host fills only", forward.HECConfig{Host: "relay"}, event, event, false},
		{"host overrides", forward.HECConfig{Host: "relay"}, event, meta{"relay", "sshd", "syslog", "main"}, true},
		{"source fills only", forward.HECConfig{Source: "agent"}, event, event, false},
		{"source overrides", forward.HECConfig{Source: "agent"}, event, meta{"web-1", "agent", "syslog", "main"}, true},
		{"sourcetype fills only", forward.HECConfig{SourceType: "linux_secure"}, event, event, false},
		{"sourcetype overrides", forward.HECConfig{SourceType: "linux_secure"}, event, meta{"web-1", "sshd", "linux_secure", "main"}, true},
		{"index fills only", forward.HECConfig{Index: "security"}, event, event, false},
		{"index overrides", forward.HECConfig{Index: "security"}, event, meta{"web-1", "sshd", "syslog", "security"}, true},
		{"all override", forward.HECConfig{Host: "h", Source: "s", SourceType: "st", Index: "i"}, event, meta{"h", "s", "st", "i"}, true},
		{"unset settings keep the event's", forward.HECConfig{}, event, event, true},
		{"empty event values filled either way", forward.HECConfig{Host: "h", Source: "s", SourceType: "st", Index: "i"}, meta{}, meta{"h", "s", "st", "i"}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.URL, cfg.Token, cfg.OverrideEventMeta = srv.URL, srv.Token(), tt.override
			h, err := forward.NewHEC(cfg)
			require.NoError(t, err)
			defer h.Close()
			b := []relaykit.Event{{Raw: []byte("msg"), Host: []byte(tt.event.host), Source: []byte(tt.event.source),
				SourceType: []byte(tt.event.sourceType), Index: []byte(tt.event.index)}}
			require.NoError(t, h.Send(t.Context(), b))
			evs := srv.Events()
			require.Len(t, evs, i+1)
			assert.Equal(t, tt.want, get(evs[i]))
		})
	}
}

// TestHECOverrideIndexNotBlamed: with OverrideEventMeta, an event whose own
// index the token may not write to goes to the configured index instead,
// and is accepted.
func TestHECOverrideIndexNotBlamed(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Indexes: []string{"security"}})
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), Index: "security", OverrideEventMeta: true})
	require.NoError(t, err)
	defer h.Close()
	b := batchOf("a", "b")
	b[0].Index = []byte("forbidden")
	require.NoError(t, h.Send(t.Context(), b))
	assert.Equal(t, []string{"a", "b"}, srv.Messages())
	for _, e := range srv.Events() {
		assert.Equal(t, "security", e.Index)
	}
}
