package config

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

// stepBuilder builds one pipeline function from its config.
type StepBuilder func(StepConfig) (pipeline.Function, error)

// builtinStep builds the pipeline package's functions; enrichment steps
// are added by the relay (see enrichStep).
func BuiltinStep(sc StepConfig) (pipeline.Function, error) {
	switch sc.Type {
	case "set":
		return pipeline.Set(sc.Field, sc.Value), nil
	case "rename":
		return pipeline.Rename(sc.Field, sc.To), nil
	case "remove":
		return pipeline.Remove(sc.Field), nil
	case "mask":
		return pipeline.Mask(sc.Field, sc.Pattern, sc.Replace)
	case "drop":
		return pipeline.Drop(sc.Field, sc.Pattern)
	case "sample":
		if !sc.Dynamic && len(sc.Key) == 0 {
			return pipeline.Sample(sc.N), nil // one in n overall, as before: no sample_rate field
		}
		return pipeline.NewSample(pipeline.SampleConfig{N: sc.N, Key: sc.Key, Dynamic: sc.Dynamic, Window: sc.Window,
			MinEvents: sc.MinEvents, MaxRate: sc.MaxRate, MaxKeys: sc.MaxKeys})
	case "suppress":
		return pipeline.NewSuppress(pipeline.SuppressConfig{Key: sc.Key, Allow: sc.Allow, Window: sc.Window, MaxKeys: sc.MaxKeys})
	case "aggregate":
		return pipeline.NewAggregate(pipeline.AggregateConfig{Key: sc.Key, Window: sc.Window, Sum: sc.Sum, Min: sc.Min, Max: sc.Max,
			SourceType: sc.SourceType, MaxKeys: sc.MaxKeys})
	case "keep":
		return pipeline.Keep(sc.Fields.Names...), nil
	case "parse_json":
		return pipeline.ParseJSON(pipeline.JSONConfig{Field: sc.Field, Prefix: sc.Prefix})
	case "parse_cef":
		return syslog.ParseCEF(), nil
	}
	if build, ok := stepTypes[sc.Type]; ok {
		return build(sc)
	}
	return nil, fmt.Errorf("unknown step type %q", sc.Type)
}

// reduceTick is the period at which the engine ends the windows of the
// routes' suppress and aggregate steps (engine.Config.WindowTick): a summary leaves at most one tick after its window
// ends, however quiet its key. It is also the shortest window a step may
// have (minReduceWindow): a finer tick would cost a pass over every
// step's keys more often for windows nobody needs below a second.
const ReduceTick = time.Second
