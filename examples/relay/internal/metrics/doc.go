// Package metrics exports library Stats types to Prometheus from tables:
// one Table per Stats type, each Row naming a descriptor and how to read
// its value from a snapshot. The rooms above describe and collect their
// tables; nothing here knows the relay. It is the floor under every
// other room and imports none of them.
package metrics
