package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusShot, when set, is where TestStatusPageInChromium saves a
// screenshot of the page (the README's docs/status.png):
//
//	go test -run TestStatusPageInChromium -status-screenshot docs/status.png
var statusShot = flag.String("status-screenshot", "", "save the status page's screenshot to this PNG `file`")

// getStatus reads /api/status with token.
func getStatus(t *testing.T, tr *testRelay, token string) Status {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+tr.addr("metrics")+"/api/status", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var st Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st
}

// /api/status reports the inputs, routes, destinations, ledger, sources
// and tap points from the relay's counters.
func TestStatusAPI(t *testing.T) {
	cfg := apiConfig(t, "")
	cfg.Sources.Enabled = true
	tr := startRelay(t, cfg)
	sendTCP(t, tr.addr("tcp"), loggerLine)
	waitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "the line archived")

	st := getStatus(t, tr, "")
	assert.True(t, st.Ready)
	assert.Positive(t, st.Uptime)
	in := map[string]InputStatus{}
	for _, i := range st.Inputs {
		in[i.Name] = i
	}
	assert.Equal(t, int64(1), in["tcp"].Received)
	assert.Equal(t, "syslog_tcp", in["tcp"].Kind)
	assert.Equal(t, int64(len(loggerLine)-1), in["tcp"].Bytes, "the frame")
	assert.GreaterOrEqual(t, in["tcp"].Connections, int64(0))
	assert.Equal(t, int64(-1), in["udp"].Connections, "UDP has no connections")
	require.Len(t, st.Routes, 1)
	assert.Equal(t, RouteStatus{Name: cfg.Routes[0].Name, Matched: 1, Out: 1}, st.Routes[0])
	require.Len(t, st.Destinations, 1)
	d := st.Destinations[0]
	assert.Equal(t, "archive", d.Name)
	assert.Equal(t, int64(1), d.Delivered)
	assert.Equal(t, "ok", d.State)
	assert.Equal(t, int64(1), st.Ledger.Received)
	assert.Equal(t, int64(1), st.Ledger.Archived)
	assert.Zero(t, st.Ledger.Dropped)
	require.NotNil(t, st.Sources)
	assert.Equal(t, 1, st.Sources.Tracked)
	var points []string
	for _, p := range st.Taps {
		points = append(points, p.Point)
	}
	assert.Equal(t, []string{"destination:archive", "input:tcp", "input:udp", "route:" + cfg.Routes[0].Name}, points)
}

// The API is off by default: the page and every /api/ path are 404.
func TestStatusPageOffByDefault(t *testing.T) {
	tr := startRelay(t, testConfig(t))
	for _, path := range []string{"/", "/api/status", "/api/tap?at=destination:archive", "/index.html"} {
		resp, err := http.Get("http://" + tr.addr("metrics") + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.NotContains(t, string(body), "<html", path)
	}
}

// With a token, /api/status and the tap answer 401 without it (and carry
// no data); the page is served, but it is a shell without data: what it
// shows, it fetches with the token.
func TestStatusAPIToken(t *testing.T) {
	const token = "status-token-1d9c"
	tr := startRelay(t, apiConfig(t, token))
	sendTCP(t, tr.addr("tcp"), loggerLine)
	waitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "the line archived")
	base := "http://" + tr.addr("metrics")
	for _, path := range []string{"/api/status", "/api/tap?at=destination:archive&limit=1", "/api/tap?at=input:tcp&limit=1"} {
		for _, auth := range []string{"", "Bearer wrong", token} {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			require.NoError(t, err)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with %q", path, auth)
			assert.NotContains(t, string(body), "archive", path)
			assert.NotContains(t, string(body), "hello", path)
		}
	}
	assert.Equal(t, int64(1), getStatus(t, tr, token).Ledger.Received)

	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, string(page), `fetch("/api/status"`)
	assert.NotContains(t, string(page), "hello from logger")
	assert.NotContains(t, string(page), token)
	// Only / itself: other paths stay 404.
	resp, err = http.Get(base + "/nope")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// The status page in headless Chromium: with the token typed in, it shows
// the inputs and the destinations, and its live tail shows a line sent
// after the page loaded.
func TestStatusPageInChromium(t *testing.T) {
	chromium := needTool(t, "chromium")
	const token = "page-token-5e2b"
	cfg := apiConfig(t, token)
	cfg.Sources.Enabled = true // the page's sources section
	tr := startRelay(t, cfg)
	sendTCP(t, tr.addr("tcp"), loggerLine) // some counts before the page loads

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	base := "http://" + tr.addr("metrics") + "/"
	// poll waits until the JavaScript expression is true in the page.
	poll := func(expr string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second)))
		require.NoError(t, err, "waiting for %s", expr)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		require.NoError(t, err, sel)
		return s
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base)))
	poll(`document.getElementById("msg").textContent.includes("token")`)
	assert.Contains(t, text("#msg"), "API token", "without the token the page asks for it")

	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys("#token", token), chromedp.Click("#save-token")))
	poll(`document.querySelector("#destinations tbody").textContent.includes("archive")`)
	inputs, dests := text("#inputs tbody"), text("#destinations tbody")
	assert.Contains(t, inputs, "tcp")
	assert.Contains(t, inputs, "syslog_tcp")
	assert.Contains(t, inputs, "udp")
	assert.Contains(t, dests, "archive")
	assert.Contains(t, dests, "ok")

	// The live tail: start it at the archive, then send a line.
	poll(`document.querySelectorAll("#tail-point option").length > 0`)
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#tail-point", "destination:archive"), chromedp.Click("#tail-start")))
	waitSubscribed(t, tr, "destination:archive", 1)
	const line = `<13>1 2026-11-27T14:00:01Z web-2 bob - - - sent after the page loaded`
	sendTCP(t, tr.addr("tcp"), line+"\n")
	poll(`document.getElementById("tail").textContent.includes("sent after the page loaded")`)
	tail := text("#tail")
	assert.Contains(t, tail, "destination:archive delivered web-2 user.notice sent after the page loaded")
	assert.NotContains(t, tail, "hello from logger", "sent before the tail started")

	// The page refreshes without reloading: the archive's count moves.
	poll(`(() => { const td = document.querySelectorAll("#destinations tbody td"); return td[0].textContent === "archive" && td[3].textContent === "2"; })()`)

	poll(`document.getElementById("sources-summary").textContent.includes("1 tracked")`)

	if *statusShot != "" {
		// Some traffic for the picture: lines over TCP and UDP while the
		// page refreshes, so that the rates are not zero.
		for i := range 8 {
			var b strings.Builder
			for j := range 40 {
				fmt.Fprintf(&b, "<%d>1 2026-11-27T14:00:%02dZ web-%d sshd %d - - Accepted publickey for deploy from 198.51.100.%d port %d\n", 38, j, i%3, 4000+j, i, 40000+j)
			}
			sendTCP(t, tr.addr("tcp"), b.String())
			send(t, "udp", tr.addr("udp"), []byte(fmt.Sprintf("<134>1 2026-11-27T14:01:%02dZ fw-1 filterlog - - - block in on em0 proto tcp 203.0.113.%d:443", i, i)))
		}
		poll(`document.querySelector("#ledger tbody tr").cells[1].textContent === "330"`) // 2 + 8 * 41 lines
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*statusShot, png, 0o644))
		t.Logf("screenshot: %s (%d bytes)", *statusShot, len(png))
	}
}
