package relaykit

import (
	"context"
	"time"
)

// Flags is a set of boolean properties of an [Event].
type Flags uint32

const (
	// FlagPriority means [Event.Priority] holds a syslog PRI value: present
	// in the input, or assumed ([FlagPriorityAssumed]). Without it,
	// Priority is meaningless.
	FlagPriority Flags = 1 << iota
	// FlagParseError means the input could not be parsed; [Event.Raw] holds
	// the bytes as received and the other metadata may be empty.
	FlagParseError
	// FlagTruncated means [Event.Raw] was cut at a size limit.
	FlagTruncated
	// FlagPriorityAssumed, set with [FlagPriority], means the input had no
	// valid PRI and Priority is the one a relay assumes for it: 13,
	// user.notice (RFC 3164 section 4.3.3, what rsyslog does). Destinations
	// treat the event as user.notice; this flag lets a user tell such
	// events from those that said user.notice themselves.
	FlagPriorityAssumed
	// FlagHostFromPeer means [Event.Host] is the sender's address, set by
	// the input because the message named no host (or none its parser
	// could read). A parsing step that finds the device's own name in the
	// message may replace it, and then clears the flag.
	FlagHostFromPeer
)

// PriorityAssumed is the syslog PRI assumed for a message without a valid
// one: facility user (1), severity notice (5) (RFC 3164 section 4.3.3).
const PriorityAssumed uint8 = 13

// Field is one extracted key/value pair of an [Event]. Both slices are owned
// by the Event and are reused by [Event.Reset]; copy them to keep them.
type Field struct {
	// Key is the field name, in bytes.
	Key []byte
	// Value is the field value, in bytes.
	Value []byte
}

// Event is one log record.
//
// The zero value is an empty event ready to use. An Event is a plain value
// with byte slices it owns; it is not safe for concurrent use, and copying an
// Event by assignment shares those slices (use [Event.Clone] or
// [Event.CopyTo] for an independent copy).
//
// Events are designed for reuse: [Event.Reset] empties an event but keeps
// the capacity of every slice, so refilling it (with the Set methods or with
// append on the exported slices) does not allocate once the buffers are
// large enough.
type Event struct {
	// ReceiveTime is when the relay received the event, in nanoseconds since
	// the Unix epoch (UTC). Zero means unknown.
	ReceiveTime int64
	// Time is the event's own timestamp (for syslog, the TIMESTAMP field), in
	// nanoseconds since the Unix epoch (UTC). Zero means unknown; sinks then
	// use ReceiveTime.
	Time int64

	// Host is the originating host name or address (syslog HOSTNAME, HEC
	// host).
	Host []byte
	// Source is the origin within the host (syslog APP-NAME, HEC source).
	Source []byte
	// SourceType names the format of Raw (HEC sourcetype), e.g. "syslog".
	SourceType []byte
	// Index is destination metadata: the index, table or stream the event
	// should land in. Empty means the destination's default.
	Index []byte

	// Raw is the message as received (for syslog, the MSG part), in bytes.
	Raw []byte

	// Fields is the ordered list of extracted fields. Keys are unique when
	// set through [Event.SetField]; appending directly is allowed but
	// skips that check.
	Fields []Field

	// Priority is the syslog PRI value (facility*8 + severity, RFC 5424
	// section 6.2.1), valid only when Flags has [FlagPriority].
	Priority uint8
	// Flags holds boolean properties; see [FlagPriority] and the others.
	Flags Flags
}

// Facility returns the syslog facility (0-23) encoded in Priority, and
// whether the event has a priority.
func (e *Event) Facility() (uint8, bool) {
	return e.Priority >> 3, e.Flags&FlagPriority != 0
}

// Severity returns the syslog severity (0-7) encoded in Priority, and
// whether the event has a priority.
func (e *Event) Severity() (uint8, bool) {
	return e.Priority & 7, e.Flags&FlagPriority != 0
}

// SetPriority sets Priority from a syslog facility (0-23) and severity (0-7)
// and sets [FlagPriority]. Out-of-range values are masked.
func (e *Event) SetPriority(facility, severity uint8) {
	e.Priority = (facility&31)<<3 | severity&7
	e.Flags |= FlagPriority
}

// EventTime returns Time, or ReceiveTime when Time is zero, as a time.Time
// in UTC. It returns the zero time.Time when both are zero.
func (e *Event) EventTime() time.Time {
	ns := e.Time
	if ns == 0 {
		ns = e.ReceiveTime
	}
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Field returns the value of the field named key and whether it exists. The
// returned slice is owned by the event and valid until the field is changed
// or the event is reset. Lookup is a linear scan: O(len(Fields)).
func (e *Event) Field(key string) ([]byte, bool) {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == key {
			return e.Fields[i].Value, true
		}
	}
	return nil, false
}

// SetField sets the field named key to a copy of value, replacing an existing
// field of that name in place or appending a new one at the end. It reuses
// the capacity left by [Event.Reset] and does not allocate once warm.
func (e *Event) SetField(key string, value []byte) {
	f := e.fieldSlot(key)
	f.Value = append(f.Value[:0], value...)
}

// SetFieldString is [Event.SetField] with a string value.
func (e *Event) SetFieldString(key, value string) {
	f := e.fieldSlot(key)
	f.Value = append(f.Value[:0], value...)
}

// fieldSlot returns the field named key, adding it (reusing spare capacity)
// if it does not exist.
func (e *Event) fieldSlot(key string) *Field {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == key {
			return &e.Fields[i]
		}
	}
	n := len(e.Fields)
	if n < cap(e.Fields) {
		e.Fields = e.Fields[:n+1]
	} else {
		e.Fields = append(e.Fields, Field{})
	}
	f := &e.Fields[n]
	f.Key = append(f.Key[:0], key...)
	return f
}

// DeleteField removes the field named key, keeping the order of the others,
// and reports whether it existed. The removed field's buffers are kept as
// spare capacity.
func (e *Event) DeleteField(key string) bool {
	for i := range e.Fields {
		if string(e.Fields[i].Key) != key {
			continue
		}
		removed := e.Fields[i]
		copy(e.Fields[i:], e.Fields[i+1:])
		last := len(e.Fields) - 1
		// Park the removed buffers past the end so they are reused.
		e.Fields[last] = Field{Key: removed.Key[:0], Value: removed.Value[:0]}
		e.Fields = e.Fields[:last]
		return true
	}
	return false
}

// RenameField renames the field from to to, keeping its position, and
// reports whether from existed. An existing field named to is removed first.
func (e *Event) RenameField(from, to string) bool {
	if from == to {
		_, ok := e.Field(from)
		return ok
	}
	if _, ok := e.Field(from); !ok {
		return false
	}
	e.DeleteField(to)
	for i := range e.Fields {
		if string(e.Fields[i].Key) == from {
			e.Fields[i].Key = append(e.Fields[i].Key[:0], to...)
			break
		}
	}
	return true
}

// Reset empties the event for reuse, keeping the capacity of every slice
// (including each field's key and value buffers).
func (e *Event) Reset() {
	fields := e.Fields
	for i := range fields {
		fields[i].Key = fields[i].Key[:0]
		fields[i].Value = fields[i].Value[:0]
	}
	*e = Event{
		Host:       e.Host[:0],
		Source:     e.Source[:0],
		SourceType: e.SourceType[:0],
		Index:      e.Index[:0],
		Raw:        e.Raw[:0],
		Fields:     fields[:0],
	}
}

// CopyTo makes dst a deep copy of e, reusing dst's buffers. It does not
// allocate once dst's buffers are large enough. dst must not be e.
func (e *Event) CopyTo(dst *Event) {
	dst.ReceiveTime = e.ReceiveTime
	dst.Time = e.Time
	dst.Priority = e.Priority
	dst.Flags = e.Flags
	dst.Host = append(dst.Host[:0], e.Host...)
	dst.Source = append(dst.Source[:0], e.Source...)
	dst.SourceType = append(dst.SourceType[:0], e.SourceType...)
	dst.Index = append(dst.Index[:0], e.Index...)
	dst.Raw = append(dst.Raw[:0], e.Raw...)
	n := len(e.Fields)
	if cap(dst.Fields) < n {
		fields := make([]Field, n)
		copy(fields, dst.Fields[:cap(dst.Fields)])
		dst.Fields = fields
	}
	dst.Fields = dst.Fields[:n]
	for i := range e.Fields {
		dst.Fields[i].Key = append(dst.Fields[i].Key[:0], e.Fields[i].Key...)
		dst.Fields[i].Value = append(dst.Fields[i].Value[:0], e.Fields[i].Value...)
	}
}

// Clone returns a deep copy of e that shares no memory with it. All byte
// data is copied into one new buffer, so a clone costs two allocations (one
// with no fields).
func (e *Event) Clone() Event {
	total := len(e.Host) + len(e.Source) + len(e.SourceType) + len(e.Index) + len(e.Raw)
	for i := range e.Fields {
		total += len(e.Fields[i].Key) + len(e.Fields[i].Value)
	}
	buf := make([]byte, 0, total)
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	c := Event{
		ReceiveTime: e.ReceiveTime,
		Time:        e.Time,
		Priority:    e.Priority,
		Flags:       e.Flags,
		Host:        take(e.Host),
		Source:      take(e.Source),
		SourceType:  take(e.SourceType),
		Index:       take(e.Index),
		Raw:         take(e.Raw),
	}
	if len(e.Fields) > 0 {
		c.Fields = make([]Field, len(e.Fields))
		for i := range e.Fields {
			c.Fields[i] = Field{Key: take(e.Fields[i].Key), Value: take(e.Fields[i].Value)}
		}
	}
	return c
}

// Size returns the number of payload bytes the event holds: the sum of the
// lengths of its byte slices, fields included. It is the usual size function
// for byte limits on batches; encoded sizes are larger.
func (e *Event) Size() int {
	n := len(e.Host) + len(e.Source) + len(e.SourceType) + len(e.Index) + len(e.Raw)
	for i := range e.Fields {
		n += len(e.Fields[i].Key) + len(e.Fields[i].Value)
	}
	return n
}

// Sink accepts batches of events: a destination such as a forwarder, an
// archive, a durable queue in front of one, or any user type.
//
// Send delivers batch, in order, or returns an error saying why it could
// not. The batch is owned by the caller: Send may read it (and the events'
// byte slices) only until it returns and must not modify or retain it; a
// Sink that works asynchronously copies what it needs. Send honours ctx
// cancellation and then returns an error wrapping ctx.Err().
//
// # Acknowledgement contract
//
// A nil error from Send means exactly one thing, for every Sink in this
// module: each event of the batch was delivered, or durably accepted by the
// Sink in the way its documentation states (written to disk by a
// write-ahead queue, held in memory by a queue that spools on failure,
// written to the file by an archive), or rejected by the destination and
// handed to a dead-letter handler with a reason. Inputs that can
// acknowledge to their senders (Kafka offset commits, HTTP responses, RELP
// acknowledgements) do so on a nil error and on nothing else. A Sink that
// fans out to several others (a router) returns nil only when every one of
// them did.
//
// A non-nil error means the batch was not accepted as a whole. When some
// events were delivered and others not, the error is (or wraps) a
// [*BatchError] that lists the undelivered ones; any other error means no
// event of the batch may be counted as delivered.
//
// Implementations document whether Send is safe for concurrent use; the
// Sinks in this module are, unless their documentation says otherwise.
type Sink interface {
	Send(ctx context.Context, batch []Event) error
}

// SinkFunc adapts an ordinary function to a [Sink], like http.HandlerFunc.
type SinkFunc func(ctx context.Context, batch []Event) error

// Send calls f(ctx, batch).
func (f SinkFunc) Send(ctx context.Context, batch []Event) error { return f(ctx, batch) }

var _ Sink = SinkFunc(nil)
