package hec_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/stream/hec"
)

// splunkLoggingEnv names the directory holding node_modules/splunk-logging
// (npm install splunk-logging; .ci/run installs it there).
const splunkLoggingEnv = "RELAYKIT_SPLUNK_LOGGING"

// Splunk's own Node.js HEC client, splunk-logging, sends to the handler
// over plain HTTP and over TLS (the certificate verified): every event
// arrives with every field.
func TestSplunkLoggingClient(t *testing.T) {
	node := testtool.Need(t, "node", "apt-get install nodejs")
	dir := os.Getenv(splunkLoggingEnv)
	if dir == "" {
		testtool.Missing(t, splunkLoggingEnv+" is not set (npm install --prefix DIR splunk-logging@0.11.1)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "splunk-logging")); err != nil {
		testtool.Missing(t, "splunk-logging is not installed in "+dir)
	}
	script, err := filepath.Abs("testdata/splunklogging.js")
	require.NoError(t, err)
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			srv, h, rec := newServer(t, hec.Config{}, useTLS)
			cmd := exec.CommandContext(t.Context(), node, script, srv.URL, secret, "50")
			cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
			if useTLS {
				ca := filepath.Join(t.TempDir(), "ca.pem")
				require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
				cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+ca)
			}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Len(t, lines, 5, string(out))
			for _, l := range lines {
				assert.Equal(t, `ok 200 {"text":"Success","code":0}`, l)
			}
			got := rec.all()
			require.Len(t, got, 50)
			// The library sends its batches in parallel: order within a
			// request only.
			seen := map[int]bool{}
			for _, e := range got {
				var ev struct{ Message, Severity string }
				require.NoError(t, json.Unmarshal(e.Raw, &ev), string(e.Raw))
				var i int
				_, err := fmt.Sscanf(ev.Message, "node event %d", &i)
				require.NoError(t, err, ev.Message)
				assert.False(t, seen[i], "event %d twice", i)
				seen[i] = true
				assert.Equal(t, map[bool]string{true: "info", false: "warn"}[i%2 == 1], ev.Severity)
				assert.Equal(t, (1700000000+int64(i))*1e9+5e8, e.Time)
				assert.Equal(t, "node-host", string(e.Host))
				assert.Equal(t, "node-source", string(e.Source))
				assert.Equal(t, "node-type", string(e.SourceType))
				assert.Equal(t, "main", string(e.Index))
			}
			assert.Equal(t, int64(5), h.Stats().Responses[hec.CodeSuccess])
		})
	}
}
