// Package tap lets an operator watch the events that flow through named
// points of a data path, live, without slowing it: the library side of
// `vector tap` or Fluent Bit's Tap.
//
// A [Point] is a named place where a publisher (an input after parsing, a
// route after its pipeline, a destination after its Send) hands over each
// batch it processes:
//
//	p := reg.Point("destination:hec")
//	err := hec.Send(ctx, batch)
//	p.PublishResult(batch, err) // delivered / failed with a reason, per event
//
// A subscriber calls [Point.Subscribe] with a filter (a regular expression
// on the raw message or on a named field), a sample rate (1 in N), an
// events-per-second cap and a buffer size, and reads [Observation] values
// — deep copies of the events with the point's name and the destination's
// [Outcome] — from [Subscription.C]. A [Registry] holds a relay's points by
// name ("input:NAME", "route:NAME", "destination:NAME"), and [Handler]
// serves them over HTTP as NDJSON or server-sent events; [Tail] and
// [ReadStream] read such a stream on the client side.
//
// # Cost model
//
// With no subscription, [Point.Publish], [Point.PublishOutcome] and
// [Point.PublishResult] cost one atomic load per batch and allocate
// nothing: a data path can keep its points published all the time.
//
// With subscriptions, each batch costs, on the publisher's goroutine:
//
//   - per batch: two atomic adds on the point's counters, and per
//     subscription two atomic loads and two atomic adds (the guard that
//     lets [Subscription.Close] wait for hand-offs in progress) plus one
//     add per non-zero counter; one clock reading when a subscription has
//     a cap;
//   - per event, per subscription with a filter: the filter's match (see
//     [pipeline.Filter]: a literal search, the regular expression only
//     when needed), and an atomic add for the events that match when
//     sampling;
//   - a subscription without a filter reserves the batch's sample numbers
//     with one atomic add and visits only the sampled events: 1 in 100
//     costs about a hundredth of the events' work;
//   - per sampled event: a check of the buffer (a subscription whose
//     buffer is full drops the whole batch's share in O(1) when it has no
//     filter), an atomic add for the cap, and for the events handed over
//     a deep copy ([relaykit.Event.Clone], two allocations) and a channel
//     send. Only those events are copied: a filtered, sampled-out, limited
//     or dropped event costs no copy.
//
// The hand-off never blocks. A subscriber that reads too slowly, or not at
// all, loses the events that find its buffer full (counted in
// [SubscriptionStats].Dropped and [Stats]); the publisher and the other
// subscribers are unaffected. The cap bounds how many copies a
// subscription can cost the data path per second; [Handler] always sets
// one.
//
// # Ownership
//
// Publish reads the batch only until it returns, and never modifies or
// retains it: the publisher may reuse its events at once. Observations are
// copies that share no memory with the publisher's events; the subscriber
// owns them and may keep or modify them.
//
// # Concurrency
//
// Points, subscriptions, the Registry and the Handler are safe for
// concurrent use by multiple goroutines. Any number of goroutines may
// publish to one point; each subscription receives the events of one
// publishing goroutine in order. Subscribing and closing never block
// publishers: the list of subscriptions is copied on write and swapped
// atomically. The package starts no goroutine: a Handler streams on the
// goroutine net/http gives each request and returns when the response
// ends, closing its subscription.
//
// # HTTP
//
// [Handler] answers GET ?at=POINT&filter=REGEX&field=FIELD&sample=N&limit=N
// with a stream of JSON objects ([AppendJSON]: the archive's event object
// with the point, the outcome and the receive time added). Events in a tap
// are the data itself: serve the Handler only where the people who can
// reach it may read every event (loopback by default in a relay), and set
// [HandlerConfig].Token.
//
// # Dependencies
//
// tap imports package pipeline for its [pipeline.Filter] and its field
// names, so that a tap filter means exactly what a route filter means; and
// net/http for the Handler. A Point alone costs nothing more.
//
// # When not to use it
//
// A tap shows a sample of live traffic to a person. It is not a delivery
// path: its subscribers lose events by design whenever they fall behind.
// To send events somewhere, use a route and a [relaykit.Sink].
package tap
