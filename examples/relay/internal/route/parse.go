package route

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
)

// The parse steps, each one of package parse's: its settings are the
// Config fields of its constructor, by the relay's names (field,
// prefix, max_fields, ...). config.Validate builds each once to check it
// (-check, `relay test`).
func init() {
	for typ, build := range parseSteps {
		config.RegisterStepType(typ, func(sc config.StepConfig) (pipeline.Function, error) {
			fn, err := build(sc)
			if err != nil {
				return nil, stepError(sc.Type, err)
			}
			return fn, nil
		})
	}
}

// parseSteps builds the parse steps, by type.
var parseSteps = map[string]config.StepBuilder{
	"kv": kvStep, "csv": csvStep, "regex": regexStep, "grok": grokStep,
	"timestamp": timestampStep, "convert": convertStep, "vendor": vendorStep,
}

// stepError words a constructor's error as the relay's checks do:
// "<type>: <what>", without package parse's prefixes, at the pattern
// (config.KeyError) when the pattern is what is wrong.
func stepError(typ string, err error) error {
	var ke *config.KeyError
	key := ""
	if errors.As(err, &ke) {
		key, err = ke.Key, ke.Err
	}
	msg := strings.TrimPrefix(err.Error(), parse.ErrInvalidConfig.Error()+": ")
	for _, name := range []string{"parse_kv", "parse_csv", "parse_regex", "parse_grok", "parse_timestamp", "convert", "vendor"} {
		msg = strings.TrimPrefix(msg, name+": ")
	}
	err = fmt.Errorf("%s: %s", typ, msg)
	if key != "" {
		return &config.KeyError{Key: key, Err: err}
	}
	return err
}

func kvStep(sc config.StepConfig) (pipeline.Function, error) {
	dup := map[string]parse.Duplicate{"": parse.DuplicateLast, "last": parse.DuplicateLast, "first": parse.DuplicateFirst, "join": parse.DuplicateJoin}
	d, ok := dup[sc.Duplicate]
	if !ok {
		return nil, fmt.Errorf("duplicate %q: want last, first or join", sc.Duplicate)
	}
	return parse.NewKV(parse.KVConfig{Field: sc.Field, Delimiters: sc.Delimiters, Separator: sc.Separator, Quotes: sc.Quotes,
		Prefix: sc.Prefix, Duplicate: d, MaxFields: sc.MaxFields})
}

func csvStep(sc config.StepConfig) (pipeline.Function, error) {
	if len(sc.Separator) > 1 {
		return nil, fmt.Errorf("separator %q: one byte, e.g. \",\" or \"\\t\"", sc.Separator)
	}
	var sep byte
	if sc.Separator != "" {
		sep = sc.Separator[0]
	}
	return parse.NewCSV(parse.CSVConfig{Field: sc.Field, Separator: sep, Columns: sc.Columns, Select: sc.Select, Sets: sc.Sets,
		Prefix: sc.Prefix, ExtraPrefix: sc.ExtraPrefix, KeepEmpty: sc.KeepEmpty, Braces: sc.Braces, MaxFields: sc.MaxFields})
}

func regexStep(sc config.StepConfig) (pipeline.Function, error) {
	if sc.Pattern == "" {
		return nil, errors.New("pattern is required")
	}
	fn, err := parse.NewRegex(parse.RegexConfig{Field: sc.Field, Pattern: sc.Pattern, Prefix: sc.Prefix})
	if err != nil {
		return nil, &config.KeyError{Key: "pattern", Err: err}
	}
	return fn, nil
}

func grokStep(sc config.StepConfig) (pipeline.Function, error) {
	if sc.Pattern == "" {
		return nil, errors.New("pattern is required")
	}
	fn, err := parse.NewGrok(parse.GrokConfig{Field: sc.Field, Pattern: sc.Pattern, Patterns: sc.Patterns, Prefix: sc.Prefix,
		CaptureUnnamed: sc.CaptureUnnamed})
	if err != nil {
		key := "pattern"
		for _, name := range slices.Sorted(maps.Keys(sc.Patterns)) {
			if strings.Contains(err.Error(), name) {
				key = "patterns." + name // the definition go-grok names
				break
			}
		}
		return nil, &config.KeyError{Key: key, Err: err}
	}
	return fn, nil
}

// referenceTimes differ in every element of Go's reference time: a layout
// that writes both the same has no element to read.
var referenceTimes = [2]time.Time{
	time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC),
	time.Date(2017, 11, 23, 9, 38, 41, 123456789, time.FixedZone("", 3600)),
}

func timestampStep(sc config.StepConfig) (pipeline.Function, error) {
	if sc.Fields.Types != nil {
		return nil, errors.New("fields is a list of names, not a map")
	}
	if len(sc.Fields.Names) == 0 {
		return nil, errors.New("fields is required (the fields holding the time, joined by separator)")
	}
	switch sc.Layout {
	case "", parse.LayoutUnix, parse.LayoutUnixMs, parse.LayoutUnixUs, parse.LayoutUnixNs:
	default:
		if referenceTimes[0].Format(sc.Layout) == referenceTimes[1].Format(sc.Layout) {
			return nil, fmt.Errorf("layout %q has no element of Go's reference time (2006-01-02T15:04:05Z07:00), nor is it unix, unix_ms, unix_us or unix_ns", sc.Layout)
		}
	}
	loc, err := location(sc.Location)
	if err != nil {
		return nil, err
	}
	return parse.NewTimestamp(parse.TimestampConfig{Fields: sc.Fields.Names, Separator: sc.Separator, Layout: sc.Layout,
		Location: loc, ZoneField: sc.ZoneField})
}

func convertStep(sc config.StepConfig) (pipeline.Function, error) {
	if len(sc.Fields.Types) == 0 {
		return nil, errors.New("fields is required: a map of field names to int, float, bool or ip")
	}
	types := make(map[string]parse.Type, len(sc.Fields.Types))
	for name, t := range sc.Fields.Types {
		types[name] = parse.Type(t)
	}
	return parse.NewConvert(parse.ConvertConfig{Fields: types, RemoveInvalid: sc.RemoveInvalid})
}

func vendorStep(sc config.StepConfig) (pipeline.Function, error) {
	if sc.Name == "" {
		return nil, fmt.Errorf("name is required (%s)", strings.Join(parse.Vendors(), ", "))
	}
	loc, err := location(sc.Location)
	if err != nil {
		return nil, err
	}
	return parse.NewVendor(parse.VendorConfig{Name: sc.Name, Field: sc.Field, Location: loc})
}

// location loads a step's location; "" is the relay's default timezone,
// Local (config.Validate fills in the configured one).
func location(name string) (*time.Location, error) {
	if name == "" {
		name = "Local"
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("location: %w", err)
	}
	return loc, nil
}
