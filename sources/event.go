package sources

import (
	"strconv"
	"time"

	"github.com/relaykit/relaykit"
)

// SourceType is the sourcetype of the events [Transition.FillEvent]
// makes.
const SourceType = "relay:source_health"

// Field names of the events [Transition.FillEvent] makes.
const (
	// FieldState holds "silent" or "active".
	FieldState = "source_state"
	// FieldLastSeen holds Transition.LastSeen in RFC 3339 UTC with
	// nanoseconds trimmed ("2006-01-02T15:04:05.999999999Z"); empty for
	// a source that never sent.
	FieldLastSeen = "last_seen"
	// FieldSilentFor holds Transition.SilentFor in whole seconds.
	FieldSilentFor = "silent_for_seconds"
	// FieldEventsBefore holds Transition.EventsBefore.
	FieldEventsBefore = "events_before"
)

// FillEvent resets e and fills it with the health event of tr, the row a
// SIEM alerts on:
//
//	ReceiveTime, Time  tr.At
//	Host               the source (the address's or host's text)
//	SourceType         "relay:source_health"
//	Raw                a one-line message, e.g.
//	                   "source 192.0.2.7 is silent: last seen 2026-05-01T10:00:00Z, silent for 300 s, 1234 events before"
//	Fields             source_state, last_seen, silent_for_seconds, events_before
//
// Source and Index are left empty for the caller to set. FillEvent reuses
// e's buffers: it does not allocate once they are large enough.
func (tr *Transition) FillEvent(e *relaykit.Event) {
	e.Reset()
	at := tr.At.UnixNano()
	e.ReceiveTime, e.Time = at, at
	e.Host = tr.Key.AppendTo(e.Host)
	e.SourceType = append(e.SourceType, SourceType...)

	var buf [40]byte
	state := tr.State.String()
	lastSeen := buf[:0]
	if !tr.LastSeen.IsZero() {
		lastSeen = tr.LastSeen.UTC().AppendFormat(lastSeen, time.RFC3339Nano)
	}
	secs := int64(tr.SilentFor / time.Second)

	e.Raw = append(e.Raw, "source "...)
	e.Raw = append(e.Raw, e.Host...)
	e.Raw = append(e.Raw, " is "...)
	e.Raw = append(e.Raw, state...)
	if tr.State == StateActive {
		e.Raw = append(e.Raw, " again"...)
	}
	e.Raw = append(e.Raw, ": last seen "...)
	if len(lastSeen) > 0 {
		e.Raw = append(e.Raw, lastSeen...)
	} else {
		e.Raw = append(e.Raw, "never"...)
	}
	e.Raw = append(e.Raw, ", silent for "...)
	e.Raw = strconv.AppendInt(e.Raw, secs, 10)
	e.Raw = append(e.Raw, " s, "...)
	e.Raw = strconv.AppendUint(e.Raw, tr.EventsBefore, 10)
	e.Raw = append(e.Raw, " events before"...)

	e.SetFieldString(FieldState, state)
	e.SetField(FieldLastSeen, lastSeen)
	var num [20]byte
	e.SetField(FieldSilentFor, strconv.AppendInt(num[:0], secs, 10))
	e.SetField(FieldEventsBefore, strconv.AppendUint(num[:0], tr.EventsBefore, 10))
}
