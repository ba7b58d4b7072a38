package relaytest

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/stretchr/testify/require"
)

// loggerLine is what util-linux `logger --tcp -n HOST -P PORT` sends: RFC
// 5424 with its timeQuality element, LF-terminated.
const LoggerLine = `<13>1 2026-11-27T14:00:00.123456+00:00 web-1 alice - - [timeQuality tzKnown="1" isSynced="1" syncAccuracy="7000"] hello from logger` + "\n"

func SendTCP(t *testing.T, addr, line string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, line)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func ConfigWithAPI(t *testing.T, token string) config.Config {
	cfg := TestConfig(t)
	cfg.API = config.APIConfig{Enabled: true, Token: config.Secret(token)}
	return cfg
}

func WriteConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "relay.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}

// freeUDPAndTCPPort returns a loopback port that was free for both UDP and
// TCP a moment ago (the default config listens on both with one port).
func FreeUDPAndTCPPort(t *testing.T) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		uc, uerr := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		require.NoError(t, ln.Close())
		if uerr == nil {
			require.NoError(t, uc.Close())
			return strconv.Itoa(port)
		}
	}
	t.Fatal("no port free for both UDP and TCP")
	return ""
}

// freeTCPAddr returns a loopback address whose TCP port was free a moment
// ago.
func FreeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func FreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

func WriteConfigAt(t *testing.T, path, yaml string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".tmp", []byte(yaml), 0o600))
	require.NoError(t, os.Rename(path+".tmp", path))
	return path
}

// testConfig is the embedded default with every listener on a free
// loopback port and every directory in a temporary one; archives are JSON so
// tests can check fields.
func TestConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.LoadConfig("")
	require.NoError(t, err)
	dir := t.TempDir()
	cfg.Inputs.SyslogUDP[0].Listen = "127.0.0.1:0"
	cfg.Inputs.SyslogTCP[0].Listen = "127.0.0.1:0"
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Workers.Count = 2
	cfg.Workers.BatchMaxWait = 20 * time.Millisecond
	cfg.Spool.Dir = filepath.Join(dir, "spool")
	cfg.DeadLetter.Dir = filepath.Join(dir, "deadletter")
	cfg.ShutdownTimeout = 20 * time.Second
	cfg.Timezone = "UTC"
	ArchiveOf(cfg).Dir = filepath.Join(dir, "archive")
	ArchiveOf(cfg).Format = "json"
	return cfg
}

// waitFor polls cond until it holds or the deadline passes: a bounded wait
// on the relay's own counters, never a sleep as synchronisation.
func WaitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func NeedTool(t *testing.T, name string) string {
	t.Helper()
	return testtool.Need(t, name, "see .ci/run for the Debian package")
}

// specOf returns destination name's section as a T (it panics if the
// destination is of another type).
func SpecOf[T config.DestSpec](cfg config.Config, name string) T {
	return cfg.Destinations[name].Spec.(T)
}

// archiveOf returns cfg's archive destination.
func ArchiveOf(cfg config.Config) *dest.ArchiveDestination {
	return SpecOf[*dest.ArchiveDestination](cfg, "archive")
}

func Send(t *testing.T, network, addr string, data []byte) {
	t.Helper()
	c, err := net.Dial(network, addr)
	require.NoError(t, err)
	_, err = c.Write(data)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// ReadmeBlock returns the YAML block of the relay's README.md that
// follows the comment <!-- marker ... -->: tests run the README's own
// text. The caller's directory is a room's (internal/<room>).
func ReadmeBlock(t *testing.T, marker string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + "[ :][^>]*-->\\s*```yaml\\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "the block after <!-- %s --> in README.md", marker)
	return string(m[1])
}

// DeviceRecipe returns the README's device recipe for vendor (its routes
// block) with the destinations the device recipes share.
func DeviceRecipe(t *testing.T, vendor string) string {
	t.Helper()
	return ReadmeBlock(t, "device-recipe: "+vendor) + ReadmeBlock(t, "device-destinations")
}
