package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/relaykit/relaykit/tap"
)

// errTapDone ends a tap's stream after -n events.
var errTapDone = errors.New("enough events")

// tapMain is `relay tap`: it connects to a running relay's /api/tap and
// prints the events at a point, one line each (or the JSON objects), until
// ctx ends or -n events were printed. It returns the exit code: 0, 1 for
// an error of the connection or the server, 2 for a usage error.
func tapMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relay tap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9464", "the relay's metrics listener `host:port`, where the API is served")
	at := fs.String("at", "", "tap `point`: input:NAME, destination:NAME (required)")
	filter := fs.String("filter", "", "only events whose message (or -field) matches this regular `expression`")
	field := fs.String("field", "", "the `field` -filter matches: host, source, sourcetype, index or an extracted field (default: the raw message)")
	sample := fs.Int("sample", 0, "one event in `N` (0: every event)")
	n := fs.Int("n", 0, "stop after `N` events (0: until interrupted)")
	token := fs.String("token", "", "API bearer `token` (default $RELAY_API_TOKEN)")
	asJSON := fs.Bool("json", false, "print each event's JSON object instead of a line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *at == "" || fs.NArg() > 0 || *n < 0 || *sample < 0 {
		fmt.Fprintln(stderr, "relay tap: -at POINT is required; -n and -sample must not be negative; no arguments")
		fs.Usage()
		return 2
	}
	if *token == "" {
		*token = os.Getenv("RELAY_API_TOKEN")
	}
	q := url.Values{tap.ParamAt: {*at}}
	if *filter != "" {
		q.Set(tap.ParamFilter, *filter)
	}
	if *field != "" {
		q.Set(tap.ParamField, *field)
	}
	if *sample > 0 {
		q.Set(tap.ParamSample, strconv.Itoa(*sample))
	}
	if *n > 0 {
		q.Set(tap.ParamLimit, strconv.Itoa(*n))
	}
	u := (&url.URL{Scheme: "http", Host: *addr, Path: "/api/tap", RawQuery: q.Encode()}).String()
	printed := 0
	err := tap.Tail(ctx, nil, u, *token, func(rec *tap.Record) error {
		if *asJSON {
			fmt.Fprintf(stdout, "%s\n", rec.JSON)
		} else {
			fmt.Fprintln(stdout, tapLine(rec))
		}
		printed++
		if *n > 0 && printed >= *n {
			return errTapDone
		}
		return nil
	})
	switch {
	case err == nil, errors.Is(err, errTapDone), ctx.Err() != nil:
		return 0
	case errors.Is(err, tap.ErrUnauthorized):
		fmt.Fprintf(stderr, "relay tap: %v: set -token or $RELAY_API_TOKEN to the relay's api.token\n", err)
	default:
		fmt.Fprintf(stderr, "relay tap: %v\n", err)
	}
	return 1
}

// tapLine is one event as a line: receive time, point, outcome (and
// reason), host, facility.severity, message, then the fields sorted by
// name as key=value.
func tapLine(rec *tap.Record) string {
	var b strings.Builder
	b.WriteString(rec.ReceiveTime.UTC().Format(time.RFC3339Nano))
	b.WriteString(" " + rec.Point)
	if rec.Outcome != "" {
		b.WriteString(" " + rec.Outcome)
		if rec.Reason != "" {
			b.WriteString("(" + rec.Reason + ")")
		}
	}
	if rec.Host != "" {
		b.WriteString(" " + rec.Host)
	}
	if rec.Facility != "" || rec.Severity != "" {
		b.WriteString(" " + rec.Facility + "." + rec.Severity)
	}
	msg := rec.Message
	if msg == "" && len(rec.MessageBase64) > 0 {
		msg = strconv.Quote(string(rec.MessageBase64))
	}
	b.WriteString(" " + strings.ReplaceAll(msg, "\n", `\n`))
	for _, k := range sortedKeys(rec.Fields) {
		fmt.Fprintf(&b, " %s=%s", k, strconv.Quote(rec.Fields[k]))
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
