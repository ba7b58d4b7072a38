package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream"
)

// statusShot, when set, is where TestStatusPageInChromium saves a
// screenshot of the page (the README's docs/status.png):
//
//	go test -run TestStatusPageInChromium -status-screenshot docs/status.png
var statusShot = flag.String("status-screenshot", "", "save the status page's screenshot to this PNG `file`")

// getStatus reads /api/status with token.
func getStatus(t *testing.T, tr *testRelay, token string) api.Status {
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
	var st api.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st
}

// /api/status reports the inputs, routes, destinations, ledger, sources
// and tap points from the relay's counters.
func TestStatusAPI(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	cfg.Sources.Enabled = true
	tr := startRelay(t, cfg)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "the line archived")

	st := getStatus(t, tr, "")
	assert.True(t, st.Ready)
	assert.Positive(t, st.Uptime)
	in := map[string]api.InputStatus{}
	for _, i := range st.Inputs {
		in[i.Name] = i
	}
	assert.Equal(t, int64(1), in["tcp"].Received)
	assert.Equal(t, "syslog_tcp", in["tcp"].Kind)
	assert.Equal(t, int64(len(relaytest.LoggerLine)-1), in["tcp"].Bytes, "the frame")
	assert.GreaterOrEqual(t, in["tcp"].Connections, int64(0))
	assert.Equal(t, int64(-1), in["udp"].Connections, "UDP has no connections")
	require.Len(t, st.Routes, 1)
	assert.Equal(t, api.RouteStatus{Name: cfg.Routes[0].Name, Matched: 1, Out: 1}, st.Routes[0])
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
	tr := startRelay(t, relaytest.TestConfig(t))
	for _, path := range []string{"/", "/api/status", "/api/tap?at=destination:archive", "/index.html"} {
		resp, err := http.Get("http://" + tr.addr("metrics") + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.NotContains(t, string(body), "<html", path)
	}
}

// With a token, the page at / and every /api/ path answer 401 without it,
// with a wrong Basic password and with a wrong bearer token, and carry no
// data; the 401 offers Basic first (a browser's login prompt). The token
// as a Basic password (any user name) or as a bearer token opens each.
func TestStatusAPIToken(t *testing.T) {
	const token = "status-token-1d9c"
	cfg := relaytest.ConfigWithAPI(t, token)
	cfg.Sources.Enabled = true // /api/sources
	tr := startRelay(t, cfg)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "the line archived")
	base := "http://" + tr.addr("metrics")
	// do requests path with the Authorization header auth, and returns
	// the response with its body read (but for a tap stream's 200: its
	// headers say the subscription is open, and it would wait for events).
	do := func(path, auth string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.HasPrefix(path, "/api/tap") {
			return resp, ""
		}
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	paths := []string{"/", "/api/status", "/api/sources", "/api/tap?at=destination:archive&limit=1", "/api/tap?at=input:tcp&limit=1", "/api/"}
	for _, path := range paths {
		for _, auth := range []string{"", basic("ops", "wrong"), basic("ops", token[:len(token)-1]), basic(token, ""),
			"Bearer wrong", token, "Bearer " + basic("ops", token)} {
			resp, body := do(path, auth)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with %q", path, auth)
			assert.Equal(t, []string{`Basic realm="relay", charset="UTF-8"`, `Bearer realm="relay"`}, resp.Header.Values("WWW-Authenticate"), path)
			assert.NotContains(t, body, "archive", path)
			assert.NotContains(t, body, "hello", path)
			assert.NotContains(t, body, "<html", path)
		}
	}
	for _, path := range paths[:len(paths)-1] {
		for _, auth := range []string{basic("ops", token), basic("", token), "Bearer " + token} {
			resp, _ := do(path, auth)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "%s with %q", path, auth)
		}
	}
	assert.Equal(t, int64(1), getStatus(t, tr, token).Ledger.Received)

	resp, page := do("/", basic("ops", token))
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, page, `fetch("/api/status"`)
	assert.NotContains(t, page, "hello from logger")
	assert.NotContains(t, page, token)
	assert.NotContains(t, page, "sessionStorage", "the page keeps no token: the browser sends it")
	// Only / itself: other paths stay 404, with the token too.
	resp, _ = do("/nope", basic("ops", token))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	// Metrics and health stay open.
	resp, _ = do("/healthz", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// Without a token the page and the API are open: the page needs no login.
func TestStatusPageWithoutToken(t *testing.T) {
	tr := startRelay(t, relaytest.ConfigWithAPI(t, ""))
	resp, err := http.Get("http://" + tr.addr("metrics") + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("WWW-Authenticate"))
	assert.Contains(t, string(page), `fetch("/api/status"`)
	assert.Equal(t, int64(0), getStatus(t, tr, "").Ledger.Received)
}

// The status page in headless Chromium, with api.token set. The browser's
// side of HTTP authentication is driven through the DevTools Fetch
// domain, as a person answers the login prompt: a refused prompt leaves
// the 401 (no page); an answered one (the token as the password) shows
// the page, and the browser then sends the credentials with the page's
// own requests by itself (no further challenge): it shows the inputs and
// the destinations, and its live tail a line sent after the page loaded.
func TestStatusPageInChromium(t *testing.T) {
	chromium := relaytest.NeedTool(t, "chromium")
	const token = "page-token-5e2b"
	cfg := relaytest.ConfigWithAPI(t, token)
	cfg.Sources.Enabled = true // the page's sources section
	// The page's TLS and PROXY section: an input with both.
	cfg.Inputs.SyslogTCP = append(cfg.Inputs.SyslogTCP, config.TCPInputConfig{Name: "tls", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{Auto: true},
		StreamLimits: config.StreamLimits{ConnLimits: config.ConnLimits{ProxyProtocol: stream.ProxyOptional, ProxyAllowed: []string{"127.0.0.1"}}}})
	tr := startRelay(t, cfg)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine) // some counts before the page loads

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

	// The login prompt: every request pauses (and goes on as it is), and
	// each challenge is answered with login's credentials, or refused
	// when it is nil (a person dismissing the prompt).
	type credentials struct{ user, pass string }
	var login atomic.Pointer[credentials]
	var challenges atomic.Int32
	events := make(chan any, 1024) // the listener must not block: the handler below drains it
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch ev.(type) {
		case *fetch.EventRequestPaused, *fetch.EventAuthRequired:
			events <- ev
		}
	}))
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for {
			var ev any
			select {
			case <-ctx.Done():
				return
			case ev = <-events:
			}
			var err error
			switch ev := ev.(type) {
			case *fetch.EventRequestPaused:
				_, err = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			case *fetch.EventAuthRequired:
				challenges.Add(1)
				answer := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
				if c := login.Load(); c != nil {
					answer = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: c.user, Password: c.pass}
				}
				if ev.AuthChallenge.Scheme != "basic" || ev.AuthChallenge.Realm != "relay" {
					t.Errorf("challenge %+v for %s", *ev.AuthChallenge, ev.Request.URL)
				}
				_, err = chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: answer})
			}
			if err != nil && ctx.Err() == nil {
				t.Errorf("answering %T: %v", ev, err)
			}
		}
	}()
	defer func() {
		cancelT() // ends the browser's tab, then the handler
		<-handled
	}()
	yes := true
	_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes})
	require.NoError(t, err)

	// The prompt refused: the relay's 401, no page.
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(base))
	require.NoError(t, err)
	assert.Equal(t, int64(http.StatusUnauthorized), resp.Status)
	assert.Equal(t, int32(1), challenges.Load())
	body := text("body")
	assert.Contains(t, body, "unauthorized")
	assert.NotContains(t, body, "Inputs")

	// The prompt answered with the token: the page, and its data.
	login.Store(&credentials{"ops", token})
	resp, err = chromedp.RunResponse(ctx, chromedp.Navigate(base))
	require.NoError(t, err)
	assert.Equal(t, int64(http.StatusOK), resp.Status)
	assert.Equal(t, int32(2), challenges.Load())
	poll(`document.querySelector("#destinations tbody").textContent.includes("archive")`)
	inputs, dests := text("#inputs tbody"), text("#destinations tbody")
	assert.Contains(t, inputs, "tcp")
	assert.Contains(t, inputs, "syslog_tcp")
	assert.Contains(t, inputs, "udp")
	assert.Contains(t, dests, "archive")
	assert.Contains(t, dests, "ok")
	fp := tlsStatus(getStatus(t, tr, token), "tls").SHA256
	poll(`document.querySelector("#listeners tbody").textContent.includes("` + fp + `")`)
	listeners := text("#listeners tbody")
	assert.Contains(t, listeners, "optional")
	assert.Contains(t, listeners, "ok (0 reloads)")

	// The live tail: start it at the archive, then send a line.
	poll(`document.querySelectorAll("#tail-point option").length > 0`)
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#tail-point", "destination:archive"), chromedp.Click("#tail-start")))
	waitSubscribed(t, tr, "destination:archive", 1)
	const line = `<13>1 2026-11-27T14:00:01Z web-2 bob - - - sent after the page loaded`
	relaytest.SendTCP(t, tr.addr("tcp"), line+"\n")
	poll(`document.getElementById("tail").textContent.includes("sent after the page loaded")`)
	tail := text("#tail")
	assert.Contains(t, tail, "destination:archive delivered web-2 user.notice sent after the page loaded")
	assert.NotContains(t, tail, "hello from logger", "sent before the tail started")

	// The page refreshes without reloading: the archive's count moves.
	poll(`(() => { const td = document.querySelectorAll("#destinations tbody td"); return td[0].textContent === "archive" && td[3].textContent === "2"; })()`)

	poll(`document.getElementById("sources-summary").textContent.includes("1 tracked")`)
	assert.Equal(t, int32(2), challenges.Load(), "the page's requests carried the credentials by themselves")
	assert.Empty(t, text("#msg"))

	if *statusShot != "" {
		// Some traffic for the picture: lines over TCP and UDP while the
		// page refreshes, so that the rates are not zero.
		for i := range 8 {
			var b strings.Builder
			for j := range 40 {
				fmt.Fprintf(&b, "<%d>1 2026-11-27T14:00:%02dZ web-%d sshd %d - - Accepted publickey for deploy from 198.51.100.%d port %d\n", 38, j, i%3, 4000+j, i, 40000+j)
			}
			relaytest.SendTCP(t, tr.addr("tcp"), b.String())
			relaytest.Send(t, "udp", tr.addr("udp"), []byte(fmt.Sprintf("<134>1 2026-11-27T14:01:%02dZ fw-1 filterlog - - - block in on em0 proto tcp 203.0.113.%d:443", i, i)))
		}
		poll(`document.querySelector("#ledger tbody tr").cells[1].textContent === "330"`) // 2 + 8 * 41 lines
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*statusShot, png, 0o644))
		t.Logf("screenshot: %s (%d bytes)", *statusShot, len(png))
	}
}
