package main

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// metricTable exports one library Stats type S: one row per value, each
// naming its descriptor and how to read the value from an S. The
// collectors describe the table and collect it from a snapshot, with the
// owner's labels (an input's or a destination's name) first; a row's
// own labels follow.
type metricTable[S any] []metricRow[S]

// metricRow is one row of a metricTable: a value of S, or several (each,
// for a map or a list in S, each with its own labels).
type metricRow[S any] struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	labels []string // after the owner's
	value  func(*S) float64
	each   func(s *S, emit func(v float64, labels ...string))
}

// counter and gauge are rows of an integer value of S; labels are the
// row's own label values.
func counter[S any](d *prometheus.Desc, v func(*S) int64, labels ...string) metricRow[S] {
	return metricRow[S]{desc: d, typ: prometheus.CounterValue, labels: labels, value: func(s *S) float64 { return float64(v(s)) }}
}

func gauge[S any](d *prometheus.Desc, v func(*S) int64, labels ...string) metricRow[S] {
	return metricRow[S]{desc: d, typ: prometheus.GaugeValue, labels: labels, value: func(s *S) float64 { return float64(v(s)) }}
}

// descs returns the table's descriptors, each once.
func (t metricTable[S]) descs() []*prometheus.Desc {
	var out []*prometheus.Desc
	for _, r := range t {
		if !slices.Contains(out, r.desc) {
			out = append(out, r.desc)
		}
	}
	return out
}

// collect sends every row's values read from s, labelled owner first.
func (t metricTable[S]) collect(ch chan<- prometheus.Metric, s *S, owner ...string) {
	for _, r := range t {
		if r.each != nil {
			r.each(s, func(v float64, labels ...string) {
				ch <- prometheus.MustNewConstMetric(r.desc, r.typ, v, append(owner[:len(owner):len(owner)], labels...)...)
			})
			continue
		}
		ch <- prometheus.MustNewConstMetric(r.desc, r.typ, r.value(s), append(owner[:len(owner):len(owner)], r.labels...)...)
	}
}

// describer is a table of any type, as a collector's Describe sees it.
type describer interface{ descs() []*prometheus.Desc }

// describeAll sends the descriptors of every table once, however many
// tables share one.
func describeAll(ch chan<- *prometheus.Desc, tables ...describer) {
	var seen []*prometheus.Desc
	for _, t := range tables {
		for _, d := range t.descs() {
			if !slices.Contains(seen, d) {
				seen = append(seen, d)
				ch <- d
			}
		}
	}
}

// boolValue is 1 for true, 0 for false (a gauge's value).
func boolValue(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
