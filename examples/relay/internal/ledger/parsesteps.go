package ledger

import (
	"strconv"

	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
)

// ParseStep is a step of package parse in a route table (kv, csv, regex,
// grok, timestamp, convert, vendor): its counters, for the metrics. Step
// is its type ("vendor:NAME" for a vendor step).
type ParseStep struct {
	Route, Step string
	Position    int // in the route's pipeline
	Fn          pipeline.Function
}

var (
	descParseEvents  = prometheus.NewDesc("relay_parse_events_total", "Events a parse step (kv, csv, regex, grok, timestamp, convert, vendor:NAME) processed, by route, step and its position in the route's pipeline. A step never drops an event: one it cannot parse keeps its raw message and goes on.", []string{"route", "step", "position"}, nil)
	descParseResults = prometheus.NewDesc("relay_parse_results_total", "What a parse step made of its events, by result: parsed or no_match (kv, csv, regex, grok, vendor: they add up to the events; no_match left the event unchanged); parsed, missing or failed (timestamp: missing and failed keep the event's time); converted, failed or missing (convert: per value, each field of each event); and, among the parsed, unterminated, too_many_fields, short, long, unselected (csv, vendor), unknown, mismatch and bad_time (vendor).", []string{"route", "step", "position", "result"}, nil)
)

// The tables of the parse steps' Stats types; Grok's are Regex's.
var (
	kvTable = metrics.Table[parse.KVStats]{
		metrics.Counter(descParseEvents, func(s *parse.KVStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.KVStats) int64 { return int64(s.Parsed) }, "parsed"),
		metrics.Counter(descParseResults, func(s *parse.KVStats) int64 { return int64(s.NoMatch) }, "no_match"),
		metrics.Counter(descParseResults, func(s *parse.KVStats) int64 { return int64(s.Unterminated) }, "unterminated"),
		metrics.Counter(descParseResults, func(s *parse.KVStats) int64 { return int64(s.TooManyFields) }, "too_many_fields"),
	}
	csvTable = metrics.Table[parse.CSVStats]{
		metrics.Counter(descParseEvents, func(s *parse.CSVStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.Parsed) }, "parsed"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.NoMatch) }, "no_match"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.Short) }, "short"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.Long) }, "long"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.Unselected) }, "unselected"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.Unterminated) }, "unterminated"),
		metrics.Counter(descParseResults, func(s *parse.CSVStats) int64 { return int64(s.TooManyFields) }, "too_many_fields"),
	}
	regexTable = metrics.Table[parse.RegexStats]{
		metrics.Counter(descParseEvents, func(s *parse.RegexStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.RegexStats) int64 { return int64(s.Matched) }, "parsed"),
		metrics.Counter(descParseResults, func(s *parse.RegexStats) int64 { return int64(s.NoMatch) }, "no_match"),
	}
	timestampTable = metrics.Table[parse.TimestampStats]{
		metrics.Counter(descParseEvents, func(s *parse.TimestampStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.TimestampStats) int64 { return int64(s.Parsed) }, "parsed"),
		metrics.Counter(descParseResults, func(s *parse.TimestampStats) int64 { return int64(s.Missing) }, "missing"),
		metrics.Counter(descParseResults, func(s *parse.TimestampStats) int64 { return int64(s.Failed) }, "failed"),
	}
	convertTable = metrics.Table[parse.ConvertStats]{
		metrics.Counter(descParseEvents, func(s *parse.ConvertStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.ConvertStats) int64 { return int64(s.Converted) }, "converted"),
		metrics.Counter(descParseResults, func(s *parse.ConvertStats) int64 { return int64(s.Failed) }, "failed"),
		metrics.Counter(descParseResults, func(s *parse.ConvertStats) int64 { return int64(s.Missing) }, "missing"),
	}
	vendorTable = metrics.Table[parse.VendorStats]{
		metrics.Counter(descParseEvents, func(s *parse.VendorStats) int64 { return int64(s.Events) }),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Parsed) }, "parsed"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.NoMatch) }, "no_match"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Unknown) }, "unknown"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Mismatch) }, "mismatch"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Short) }, "short"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Long) }, "long"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.BadTime) }, "bad_time"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.Unterminated) }, "unterminated"),
		metrics.Counter(descParseResults, func(s *parse.VendorStats) int64 { return int64(s.TooManyFields) }, "too_many_fields"),
	}
)

// parseTables are the tables collectParse sends, for Describe.
var parseTables = []metrics.Describer{kvTable, csvTable, regexTable, timestampTable, convertTable, vendorTable}

// collectParse sends the parse steps' metrics.
func (l *Ledger) collectParse(ch chan<- prometheus.Metric) {
	for _, p := range newestFirst(l, func(s Steps) []*ParseStep { return s.Parse },
		func(p *ParseStep) stepLabels { return stepLabels{p.Route, p.Step, p.Position} }) {
		owner := []string{p.Route, p.Step, strconv.Itoa(p.Position)}
		switch f := p.Fn.(type) {
		case *parse.KV:
			s := f.Stats()
			kvTable.Collect(ch, &s, owner...)
		case *parse.CSV:
			s := f.Stats()
			csvTable.Collect(ch, &s, owner...)
		case *parse.Regex: // and *parse.Grok
			s := f.Stats()
			regexTable.Collect(ch, &s, owner...)
		case *parse.Timestamp:
			s := f.Stats()
			timestampTable.Collect(ch, &s, owner...)
		case *parse.Convert:
			s := f.Stats()
			convertTable.Collect(ch, &s, owner...)
		case *parse.Vendor:
			s := f.Stats()
			vendorTable.Collect(ch, &s, owner...)
		}
	}
}
