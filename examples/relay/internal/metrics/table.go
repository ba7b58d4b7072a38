package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// metricTable exports one library Stats type S: one row per value, each
// naming its descriptor and how to read the value from an S. The
// collectors describe the table and collect it from a snapshot, with the
// owner's labels (an input's or a destination's name) first; a row's
// own labels follow.
type Table[S any] []Row[S]

// metricRow is one row of a metricTable: a value of S, or several (each,
// for a map or a list in S, each with its own labels).
type Row[S any] struct {
	Desc   *prometheus.Desc
	Type   prometheus.ValueType
	Labels []string // after the owner's
	Value  func(*S) float64
	Each   func(s *S, emit func(v float64, labels ...string))
}

// counter and gauge are rows of an integer value of S; labels are the
// row's own label values.
func Counter[S any](d *prometheus.Desc, v func(*S) int64, labels ...string) Row[S] {
	return Row[S]{Desc: d, Type: prometheus.CounterValue, Labels: labels, Value: func(s *S) float64 { return float64(v(s)) }}
}

func Gauge[S any](d *prometheus.Desc, v func(*S) int64, labels ...string) Row[S] {
	return Row[S]{Desc: d, Type: prometheus.GaugeValue, Labels: labels, Value: func(s *S) float64 { return float64(v(s)) }}
}

// descs returns the table's descriptors, each once.
func (t Table[S]) Descs() []*prometheus.Desc {
	var out []*prometheus.Desc
	for _, r := range t {
		if !slices.Contains(out, r.Desc) {
			out = append(out, r.Desc)
		}
	}
	return out
}

// collect sends every row's values read from s, labelled owner first.
func (t Table[S]) Collect(ch chan<- prometheus.Metric, s *S, owner ...string) {
	for _, r := range t {
		if r.Each != nil {
			r.Each(s, func(v float64, labels ...string) {
				ch <- prometheus.MustNewConstMetric(r.Desc, r.Type, v, append(owner[:len(owner):len(owner)], labels...)...)
			})
			continue
		}
		ch <- prometheus.MustNewConstMetric(r.Desc, r.Type, r.Value(s), append(owner[:len(owner):len(owner)], r.Labels...)...)
	}
}

// describer is a table of any type, as a collector's Describe sees it.
type Describer interface{ Descs() []*prometheus.Desc }

// describeAll sends the descriptors of every table once, however many
// tables share one.
func DescribeAll(ch chan<- *prometheus.Desc, tables ...Describer) {
	var seen []*prometheus.Desc
	for _, t := range tables {
		for _, d := range t.Descs() {
			if !slices.Contains(seen, d) {
				seen = append(seen, d)
				ch <- d
			}
		}
	}
}

// boolValue is 1 for true, 0 for false (a gauge's value).
func Bool(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
