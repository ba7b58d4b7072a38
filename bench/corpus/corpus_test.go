package corpus_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/bench/corpus"
	"github.com/relaykit/relaykit/syslog"
)

func digest(kind corpus.Kind, seed uint64, n int) [32]byte {
	g := corpus.New(kind, corpus.Config{Seed: seed})
	h := sha256.New()
	var line []byte
	for range n {
		line, _ = g.Next(line[:0])
		h.Write(line)
		h.Write([]byte{'\n'})
	}
	return [32]byte(h.Sum(nil))
}

// TestDeterministic: the same seed gives the same bytes, another seed
// other bytes.
func TestDeterministic(t *testing.T) {
	for _, k := range corpus.Kinds {
		assert.Equal(t, digest(k, 7, 5000), digest(k, 7, 5000), k.String())
		assert.NotEqual(t, digest(k, 7, 5000), digest(k, 8, 5000), k.String())
	}
}

// TestCorporaParse: every line is syslog the parser reads in full (RFC
// 5424 or 3164), the CEF corpora's lines decode as CEF of the products
// documented, the times advance at the rate, and each corpus has the
// shape its documentation promises.
func TestCorporaParse(t *testing.T) {
	const n = 20000
	for _, k := range corpus.Kinds {
		t.Run(k.String(), func(t *testing.T) {
			g := corpus.New(k, corpus.Config{Seed: 1, Rate: 1000})
			p := syslog.NewParser(syslog.Config{CEF: true})
			var e relaykit.Event
			var line []byte
			var prev int64
			vendors := map[string]int{}
			srcs := map[string]int{}
			acts := map[string]int{}
			repeats := 0
			lastMsg := map[string][]byte{}
			for i := range n {
				var ns int64
				line, ns = g.Next(line[:0])
				if i > 0 {
					require.Equal(t, int64(1e6), ns-prev, "1,000 events per second")
				}
				prev = ns
				e.Reset()
				e.ReceiveTime = ns
				f := p.Parse(&e, line)
				require.Contains(t, []syslog.Format{syslog.RFC5424, syslog.RFC3164}, f, "%s", line)
				require.Zero(t, e.Flags&relaykit.FlagParseError, "%s", line)
				if v, ok := e.Field("cef.device_vendor"); ok {
					vendors[string(v)]++
				}
				if v, ok := e.Field("src"); ok {
					srcs[string(v)]++
				}
				if v, ok := e.Field("act"); ok {
					acts[string(v)]++
				}
				if bytes.Equal(lastMsg[string(e.Host)], e.Raw) {
					repeats++
				}
				lastMsg[string(e.Host)] = append(lastMsg[string(e.Host)][:0], e.Raw...)
			}
			top := 0
			for _, c := range srcs {
				top = max(top, c)
			}
			switch k {
			case corpus.Firewall:
				assert.Equal(t, map[string]int{"Acme": n}, vendors)
				assert.InDelta(t, 0.18, float64(acts["deny"])/n, 0.02, "18 %% denies")
				assert.Greater(t, float64(top)/n, 0.02, "Zipf: the busiest source has a few percent of the lines")
				assert.Greater(t, len(srcs), 500, "and a long tail")
			case corpus.Daemons:
				assert.Empty(t, vendors)
				assert.Greater(t, float64(repeats)/n, 0.85, "bursts of repeats (mean 12)")
			case corpus.CEFVendors:
				assert.Len(t, vendors, 4, "%v", vendors)
				for _, v := range []string{"Palo Alto Networks", "Fortinet", "Check Point", "Zscaler"} {
					assert.Positive(t, vendors[v], v)
				}
				assert.InDelta(t, 0.48, float64(vendors["Palo Alto Networks"])/n, 0.03)
			}
		})
	}
}
