package service

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/configtest"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyInput is a config with one input of every kind the config format
// knows, each named after its kind's key, listening on free loopback
// ports.
func everyInput(t *testing.T) config.Config {
	t.Helper()
	cfg := relaytest.TestConfig(t)
	cert, key := selfSigned(t)
	cfg.Inputs = config.InputsConfig{
		SyslogUDP: []config.UDPInputConfig{{Name: "syslog_udp", Listen: "127.0.0.1:0"}},
		SyslogTCP: []config.TCPInputConfig{{Name: "syslog_tcp", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: cert, KeyFile: key}}},
		JSONTCP:   []config.JSONInputConfig{{Name: "json_tcp", Listen: "127.0.0.1:0"}},
		// A broker nobody listens on: the consumer is built and runs, and
		// stops with the relay without having fetched anything.
		Kafka: []config.KafkaInputConfig{{Name: "kafka", Brokers: []string{"127.0.0.1:1"}, Topics: []string{"t"}, Group: "g"}},
		RELP:  []config.RELPInputConfig{{Name: "relp", Listen: "127.0.0.1:0"}},
		HEC:   []config.HECInputConfig{{Name: "hec", Listen: "127.0.0.1:0", Tokens: []config.HECTokenConfig{{Name: "t", Token: "tok"}}}},
		OTLP:  []config.OTLPInputConfig{{Name: "otlp", HTTPListen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0"}},
		// Count: it stops generating at once; it is an input all the same.
		Generator: config.GeneratorConfig{Rate: 1, Count: 1},
	}
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestInputRegistry holds every kind of input the config format knows
// against everything that lists inputs: the registry, the startup
// summary, sources.keys, the file-descriptor budget, the built relay (an
// input each, with its listeners' addresses, its tap point and its
// metrics), relay test and shutdown. A kind added to InputsConfig and
// missing from any of them fails here.
func TestInputRegistry(t *testing.T) {
	// The config format's kinds are the registry's, in the same order,
	// each under its YAML key.
	var keys, registered []string
	ct := reflect.TypeFor[config.InputsConfig]()
	for i, sec := range config.InputKinds() {
		keys = append(keys, sec.Key())
		tag, _, _ := strings.Cut(ct.Field(i).Tag.Get("yaml"), ",")
		assert.Equal(t, tag, sec.Key(), "InputsConfig.%s's key", ct.Field(i).Name)
	}
	for _, k := range input.Kinds {
		registered = append(registered, k.Key)
		assert.NotNil(t, k.Build, "kind %s has a constructor", k.Key)
	}
	require.Equal(t, keys, registered, "the input registry lists every kind of InputsConfig, in its order")

	cfg := everyInput(t)
	secs := cfg.Inputs.Sections()
	require.Len(t, secs, len(keys), "one input of every kind")
	for i, sec := range secs {
		require.Equal(t, keys[i], sec.Key())
		require.Equal(t, sec.Key(), sec.InputName())
	}

	// The summary and -check name every input.
	sum := cfg.Summary()
	needs := FileNeeds(cfg)
	for _, sec := range secs {
		name := sec.InputName()
		assert.Contains(t, "\n"+sum, "\ninput "+name+": ", "the summary names input %s", name)
		// The file-descriptor budget counts its connections.
		if _, conns := sec.Files(); conns > 0 {
			assert.Contains(t, needs, FileNeed{What: "input " + name + " max_connections", N: conns})
		}
		// sources.keys takes the keys it offers and refuses the others.
		for _, k := range []string{config.SourceKeyAddress, config.SourceKeyHost} {
			c := cfg
			c.Sources = config.SourcesConfig{Enabled: true, Keys: map[string]string{name: k}}
			err := c.Validate()
			if offered := strings.Contains(strings.Join(sec.SourceKeys(), ","), k); offered {
				assert.NoError(t, err, "sources.keys.%s: %s", name, k)
			} else {
				assert.ErrorContains(t, err, "sources.keys."+name+":", "sources.keys.%s: %s", name, k)
			}
		}
	}

	// relay test reads the kinds whose registry entry says how, and names
	// the kind of the others.
	for _, k := range input.Kinds {
		_, err := configtest.RunTests(&cfg, []configtest.TestCase{{Name: k.Key, Input: configtest.TestInput{Name: k.Key, Line: "<13>1 - h a - - - x"},
			Expect: configtest.Expectations{{Destinations: &configtest.DestinationSet{"archive"}}}}})
		require.NoError(t, err)
		rep, _ := configtest.RunTests(&cfg, []configtest.TestCase{{Name: k.Key, Input: configtest.TestInput{Name: k.Key, Line: `{"event":"x"}`}}})
		failures := strings.Join(rep.Cases[0].Failures, "\n")
		if k.Test == nil {
			assert.Contains(t, failures, fmt.Sprintf(" %s input; relay test reads", k.Key), "relay test says it cannot read %s", k.Key)
		} else {
			assert.NotContains(t, failures, "input:", "relay test reads %s", k.Key)
		}
	}

	// The relay builds one input per section, each with its listeners'
	// addresses, its tap point and its metrics; they all stop with it.
	tr := startRelay(t, cfg)
	require.Len(t, tr.inputs, len(secs))
	addrs := tr.Addrs()
	points := strings.Join(tr.taps.Names(), "\n") + "\n"
	resp, err := http.Get("http://" + tr.addr("metrics") + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	metrics := string(body)
	for i, sec := range secs {
		name := sec.InputName()
		if listeners, _ := sec.Files(); listeners > 0 && sec.Key() != "kafka" {
			found := false
			for a := range addrs {
				found = found || a == name || strings.HasPrefix(a, name+"/")
			}
			assert.True(t, found, "Addrs has the listeners of input %s: %v", name, addrs)
		}
		assert.Contains(t, points, "input:"+name+"\n", "input %s has its tap point", name)
		assert.Contains(t, metrics, fmt.Sprintf(`relay_input_received_events_total{input=%q,kind=%q}`, name, sec.Kind()), "the ledger's metrics of input %s", name)
		for _, tbl := range input.Kinds[i].Tables {
			for _, d := range tbl.Descs() {
				// (A series per partition or per answer code: none yet.)
				if fq := descName(t, d.String()); fq != "relay_kafka_consumer_lag" && fq != "relay_hec_responses_total" {
					assert.Regexp(t, regexp.MustCompile(`(?m)^`+fq+`\{[^}]*input="`+name+`"`), metrics, "input %s exports %s", name, fq)
				}
			}
		}
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Input["generator"] == 1 }, "the generator's event")
	checkBalanced(t, tr.stop(t))
}

// descName is the metric name of a descriptor's String.
func descName(t *testing.T, desc string) string {
	t.Helper()
	m := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(desc)
	require.NotNil(t, m, desc)
	return m[1]
}

// TestDestRegistry: every destination type the config format knows has
// its sink (dest.NewSink), and a config naming each type builds.
func TestDestRegistry(t *testing.T) {
	names := config.DestTypeNames()
	require.Equal(t, []string{"archive", "hec", "sentinel", "syslog", "kafka", "otlp"}, names)
	for _, n := range names {
		assert.True(t, dest.HasSink(n), "destination type %s has a sink", n)
	}
}
