package configtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream/hec"
)

// inputEvents parses a case's input as the relay's input would: the
// events, and notes on what the input refused.
func (tr *testRunner) inputEvents(in TestInput) ([]relaykit.Event, []string, error) {
	kind, settings, err := tr.inputKind(in)
	if err != nil {
		return nil, nil, err
	}
	base := defaultTestTime
	if in.Time != "" {
		if base, err = time.Parse(time.RFC3339Nano, in.Time); err != nil {
			return nil, nil, fmt.Errorf("time: %w", err)
		}
	}
	source := in.Source
	if source == "" {
		source = defaultTestSource
	}
	lines := in.Lines
	if in.Line != "" {
		lines = []string{in.Line}
	}
	var events []relaykit.Event
	var notes []string
	switch kind {
	case "syslog":
		sp := input.NewSyslogParser(tr.loc)
		for i, l := range lines {
			var ev relaykit.Event
			frame := []byte(l)
			cut := settings.maxMessage > 0 && len(frame) > settings.maxMessage
			if cut {
				frame = frame[:settings.maxMessage]
			}
			// syslogParser.Parse with the case's receive time (the
			// reference of a timestamp without a year) for the clock's.
			ev.ReceiveTime = base.Add(time.Duration(i) * time.Millisecond).UnixNano()
			sp.Parser.Parse(&ev, frame)
			if len(ev.Host) == 0 {
				ev.Host = append(ev.Host, source...)
			}
			if cut {
				ev.Flags |= relaykit.FlagTruncated
			}
			events = append(events, ev)
		}
	case "json":
		for i, l := range lines {
			if settings.maxMessage > 0 && len(l) > settings.maxMessage {
				notes = append(notes, fmt.Sprintf("line %d is longer than %d bytes, dead-lettered", i+1, settings.maxMessage))
				continue
			}
			if err := fastjson.Validate(l); err != nil {
				notes = append(notes, fmt.Sprintf("line %d is not valid JSON, dead-lettered: %v", i+1, err))
				continue
			}
			var ev relaykit.Event
			input.FillJSONEvent(&ev, []byte(l), source)
			events = append(events, ev)
		}
	default: // hec, hec_raw
		events, notes, err = tr.hecEvents(kind, settings.hec, in, lines, source)
		if err != nil {
			return nil, nil, err
		}
	}
	for i := range events {
		events[i].ReceiveTime = base.Add(time.Duration(i) * time.Millisecond).UnixNano()
	}
	return events, notes, nil
}

// inputSettings are the settings of a named input that change what its
// parser makes of a line.
type inputSettings struct {
	maxMessage int                    // syslog: frames are cut at this size; json: longer lines are refused; 0 means no limit
	hec        *config.HECInputConfig // hec: the tokens and body limit
}

// inputKind resolves a case's input kind and the settings of its named
// input.
func (tr *testRunner) inputKind(in TestInput) (string, inputSettings, error) {
	kind, s := in.Kind, inputSettings{}
	if in.Name != "" {
		// The named input's kind, from the input registry: how relay test
		// reads its lines, and its line limit.
		found := ""
		for _, sec := range tr.cfg.Inputs.Sections() {
			if sec.InputName() != in.Name || sec.Summary() == "" {
				continue
			}
			k, _ := input.KindOf(sec.Key())
			if k == nil || k.Test == nil {
				article := "a"
				if strings.ContainsAny(sec.Key()[:1], "aeiou") {
					article = "an"
				}
				return "", s, fmt.Errorf("name: %q is %s %s input; relay test reads syslog, relp, json_tcp and hec inputs", in.Name, article, sec.Key())
			}
			found, s.maxMessage = k.Test(sec)
			if h, ok := sec.(*config.HECInputConfig); ok {
				s.hec = h
			}
		}
		switch {
		case found == "":
			return "", s, fmt.Errorf("name: no syslog, relp, json_tcp or hec input is named %q", in.Name)
		case kind == "":
			kind = found
		case kind != found && !(kind == "hec_raw" && found == "hec"):
			return "", s, fmt.Errorf("kind: %s, but input %q takes %s", kind, in.Name, found)
		}
	}
	switch kind {
	case "":
		kind = "syslog"
	case "syslog", "json":
	case "hec", "hec_raw":
		if s.hec == nil && len(tr.cfg.Inputs.HEC) > 0 {
			s.hec = &tr.cfg.Inputs.HEC[0]
		}
	default:
		return "", s, fmt.Errorf("kind: unknown kind %q (want syslog, hec, hec_raw or json)", kind)
	}
	return kind, s, nil
}

// testChannel is the HEC channel of a case's requests.
const testChannel = "00000000-0000-4000-8000-000000000000"

// hecEvents decodes each line as one request body to the input's HEC
// handler (its tokens' defaults and routes; acknowledgement off), served
// in process.
func (tr *testRunner) hecEvents(kind string, cfg *config.HECInputConfig, in TestInput, lines []string, source string) ([]relaykit.Event, []string, error) {
	hc := hec.Config{RouteField: config.HECRouteField}
	if cfg != nil {
		hc.Tokens, hc.MaxBodyBytes = config.HECTokens(cfg.Tokens), int64(cfg.MaxBodySize)
	} else {
		hc.Tokens = []hec.Token{{Name: "relay-test", Token: "relay-test"}}
	}
	token := ""
	for i := range hc.Tokens {
		hc.Tokens[i].Ack = false // answered once the events are taken: here, at once
		if in.Token == "" && i == 0 || hc.Tokens[i].Name == in.Token {
			token = hc.Tokens[i].Token
		}
	}
	if token == "" {
		return nil, nil, fmt.Errorf("token: the input has no token named %q", in.Token)
	}
	var events []relaykit.Event
	hc.Sink = relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			events = append(events, batch[i].Clone())
		}
		return nil
	})
	h, err := hec.New(hc)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	path := "/services/collector/event"
	if kind == "hec_raw" {
		path = "/services/collector/raw"
	}
	remote := source
	if _, _, err := net.SplitHostPort(source); err != nil {
		remote = net.JoinHostPort(source, "50000")
	}
	var notes []string
	for i, body := range lines {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.RemoteAddr = remote
		req.Header.Set("Authorization", "Splunk "+token)
		req.Header.Set("X-Splunk-Request-Channel", testChannel)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			notes = append(notes, fmt.Sprintf("request %d answered %d %s", i+1, w.Code, strings.TrimSpace(w.Body.String())))
		}
	}
	return events, notes, nil
}
