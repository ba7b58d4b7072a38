package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
)

// errUnauthorized is a 401 from the relay's API.
var errUnauthorized = errors.New("401 unauthorized")

// topMain is `relay top`: the numbers of the status page in a terminal,
// redrawn every -interval (a clear-screen escape and the tables) from a
// running relay's GET /api/status, until ctx ends or -n screens were
// drawn. It returns the exit code: 0, 1 for an error of the connection or
// the server, 2 for a usage error.
func topMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relay top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9464", "the relay's metrics listener `host:port`, where the API is served")
	token := fs.String("token", "", "API bearer `token` (default $RELAY_API_TOKEN)")
	n := fs.Int("n", 0, "stop after `N` screens (0: until interrupted)")
	every := fs.Duration("interval", time.Second, "time between screens")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *n < 0 || *every <= 0 {
		fmt.Fprintln(stderr, "relay top: -n must not be negative, -interval must be positive; no arguments")
		fs.Usage()
		return 2
	}
	if *token == "" {
		*token = os.Getenv("RELAY_API_TOKEN")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	url := "http://" + *addr + "/api/status"
	tick := time.NewTicker(*every)
	defer tick.Stop()
	var prev *api.Status
	for drawn := 0; *n == 0 || drawn < *n; drawn++ {
		if drawn > 0 {
			select {
			case <-ctx.Done():
				return 0
			case <-tick.C:
			}
		}
		st, err := fetchStatus(ctx, client, url, *token)
		switch {
		case ctx.Err() != nil:
			return 0
		case errors.Is(err, errUnauthorized):
			fmt.Fprintf(stderr, "relay top: %v: set -token or $RELAY_API_TOKEN to the relay's api.token\n", err)
			return 1
		case err != nil:
			fmt.Fprintf(stderr, "relay top: %v\n", err)
			return 1
		}
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J") // cursor home, clear the screen
		renderTop(&b, *addr, st, prev)
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return 1
		}
		prev = st
	}
	return 0
}

// fetchStatus GETs url (a relay's /api/status) with token.
func fetchStatus(ctx context.Context, c *http.Client, url, token string) (*api.Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return nil, errUnauthorized
	case http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: 404: is api.enabled true in the relay's config?", url)
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	var st api.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return &st, nil
}

// renderTop writes one screen: a header line, then inputs, routes and
// destinations as tables, the ledger, sources and the open taps. Rates
// are per second since prev (nil: the first screen, shown as "-").
func renderTop(b *strings.Builder, addr string, st, prev *api.Status) {
	dt := 0.0
	if prev != nil {
		dt = st.Time.Sub(prev.Time).Seconds()
	}
	rate := func(cur, old int64, found bool) string {
		if !found || dt <= 0 {
			return "-"
		}
		return human(float64(max(cur-old, 0)) / dt)
	}
	ready := "ready"
	if !st.Ready {
		ready = "NOT READY"
	}
	fmt.Fprintf(b, "relay %s  %s  up %s  %s\n\n", addr, ready, (time.Duration(st.Uptime) * time.Second).String(), st.Time.Local().Format("15:04:05"))
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INPUT\tKIND\tCONNS\tEV/S\tRECEIVED\tDROPPED\tPARSE ERR")
	for _, in := range st.Inputs {
		var old int64
		found := false
		if prev != nil {
			if i := slices.IndexFunc(prev.Inputs, func(p api.InputStatus) bool { return p.Name == in.Name }); i >= 0 {
				old, found = prev.Inputs[i].Received, true
			}
		}
		conns := "-"
		if in.Connections >= 0 {
			conns = fmt.Sprint(in.Connections)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", in.Name, in.Kind, conns, rate(in.Received, old, found), in.Received, in.Dropped, in.ParseErrors)
	}
	_ = w.Flush()
	b.WriteString("\n")
	w = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ROUTE\tMATCHED/S\tMATCHED\tOUT\tDROPPED")
	for _, r := range st.Routes {
		var old int64
		found := false
		if prev != nil {
			if i := slices.IndexFunc(prev.Routes, func(p api.RouteStatus) bool { return p.Name == r.Name }); i >= 0 {
				old, found = int64(prev.Routes[i].Matched), true
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\n", r.Name, rate(int64(r.Matched), old, found), r.Matched, r.Out, r.Dropped)
	}
	_ = w.Flush()
	b.WriteString("\n")
	w = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "DESTINATION\tKIND\tDELIV/S\tDELIVERED\tBACKLOG\tSPOOL\tDROPPED\tSTATE")
	for _, d := range st.Destinations {
		var old int64
		found := false
		if prev != nil {
			if i := slices.IndexFunc(prev.Destinations, func(p api.DestinationStatus) bool { return p.Name == d.Name }); i >= 0 {
				old, found = prev.Destinations[i].Delivered, true
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s\n", d.Name, d.Kind, rate(d.Delivered, old, found), d.Delivered, d.Backlog, humanBytes(d.SpoolBytes), d.Dropped, d.State)
	}
	_ = w.Flush()
	l := st.Ledger
	fmt.Fprintf(b, "\nLEDGER received=%d routed=%d queued=%d delivered=%d archived=%d pending=%d reduced=%d produced=%d dropped=%d",
		l.Received, l.Routed, l.Queued, l.Delivered, l.Archived, l.Pending, l.Reduced, l.Produced, l.Dropped)
	var reasons []string
	for _, k := range sortedKeys64(l.ByReason) {
		if v := l.ByReason[k]; v != 0 {
			reasons = append(reasons, fmt.Sprintf("%s=%d", k, v))
		}
	}
	if len(reasons) > 0 {
		b.WriteString(" {" + strings.Join(reasons, ",") + "}")
	}
	b.WriteString("\n")
	if s := st.Sources; s != nil {
		fmt.Fprintf(b, "SOURCES tracked=%d silent=%d limited=%d dropped=%d\n", s.Tracked, s.Silent, s.Limited, s.Dropped)
	}
	for _, in := range st.Inputs {
		if c := in.TLS; c != nil {
			fmt.Fprintf(b, "TLS %s sha256=%s expires %s reloads=%d reload_errors=%d", in.Name, c.SHA256, c.NotAfter.UTC().Format(time.DateOnly), c.Reloads, c.ReloadErrors)
			if c.Error != "" {
				fmt.Fprintf(b, " error=%q", c.Error)
			}
			b.WriteString("\n")
		}
	}
	var taps []string
	for _, t := range st.Taps {
		if t.Subscribers > 0 {
			taps = append(taps, fmt.Sprintf("%s(%d)", t.Point, t.Subscribers))
		}
	}
	if len(taps) > 0 {
		b.WriteString("TAPS " + strings.Join(taps, " ") + "\n")
	}
}

func sortedKeys64(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// human formats a rate: 950, 12.3k, 1.20M.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// humanBytes formats a size in binary units: 0B, 12.0KiB, 3.4GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
