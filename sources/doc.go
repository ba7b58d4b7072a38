// Package sources knows every sender: per-source statistics with bounded
// cardinality, silent-source detection, and per-source rate limits.
//
// A relay's first question is not how fast it is but whether every device
// is still sending. A [Tracker] keeps, per key (the sender's address, or
// the host an event names), the events and bytes it sent, when it was
// first and last seen, its recent rate and its state (active, silent,
// limited), for at most [Config].MaxSources keys. A key that sent before
// and stays quiet longer than its SilentAfter is reported silent, and
// active again when it sends; the report is a [Transition] that
// [Transition.FillEvent] turns into an event for the pipeline (sourcetype
// relay:source_health), so the SIEM receives a row it can alert on. Per-key
// rate limits drop a flooding sender's excess (UDP) or pace its connection
// (streams), and nobody else's.
//
// # Wiring
//
// An input calls one method per event, or per read's batch of events from
// one source:
//
//   - a stream input takes a [Conn] per connection ([Input.Conn]), calls
//     [Conn.Event] per event and [Conn.BeforeRead] before each read (pace
//     mode: it waits there while the sender is over its rate), or, for
//     finer control, a [Handle] ([Tracker.Addr]) with [Handle.Observe],
//     [Handle.Allow] (drop mode) or [Handle.Pace] (pace mode: it waits the
//     returned duration before reading that connection again);
//   - a datagram input calls [Tracker.ObserveAddr] or [Tracker.AllowAddr]
//     per datagram (or per run of datagrams from one sender);
//   - an input keyed by the event's host calls [Tracker.ObserveHost] or
//     [Tracker.AllowHost] after parsing (or takes [Tracker.Host]).
//
// All inputs can share one Tracker, so that a source is one key whichever
// input it uses; each input calls these methods on its [Input]
// ([Tracker.Input]) to have the key remember where it was last seen
// (Source.Input).
//
// Events a rate limit refused are the caller's to drop and count (reason
// relaykit.ReasonRateLimit); the tracker counts them per key too
// (Source.Dropped). One goroutine runs [Tracker.Run] for the timers; readers
// call [Tracker.Sources] (snapshots, filtered by state, top-N by events,
// bytes, rate, dropped or limited), [Tracker.Source] and [Tracker.Stats].
// [Tracker.SetPolicy] replaces thresholds, expected keys and limits on a
// reload; [Tracker.Load] and [Tracker.Save] (or Config.StateFile) keep the
// known keys across a restart.
//
// A nil *Tracker is valid and does nothing, so an input can hold one that
// is nil when tracking is off.
//
// [Handler] serves the list over HTTP as JSON (the relay's GET
// /api/sources), filtered and ordered by its query, behind the same token
// as tap.Handler; package input charges the sources of its syslog and
// JSON-lines inputs through an [Input].
//
// # Concurrency and cost
//
// A Tracker is safe for concurrent use. Keys live in 64 shards of
// open-addressing hash tables that lookups read without a lock (an entry's
// key never changes; tables are replaced, never resized in place); only
// a new key takes its shard's lock. For a known key, an event costs a
// few atomic operations on the key's entry (events, bytes, and last seen
// when the clock has moved; the limiter's timestamp with a limit) and no
// allocation, plus, without a Handle, a hash of the key (no allocation for
// a host given as bytes; a host of up to 32 bytes is kept in its entry's
// allocation, beside the fields a lookup reads). Nothing calls time.Now
// per event: the time comes from [Config].Clock, a cached clock. Figures
// are in the package's benchmarks (BenchmarkObserve, BenchmarkAllow).
//
// A key's first event allocates its entry (one allocation: 224 bytes for
// an address, 256 for a host of up to 32 bytes; a longer host adds its
// text's), and, with MaxSources keys tracked, evicts one. Run visits every
// key once per Resolution under each shard's lock in turn, which costs
// O(keys).
//
// # Bounded cardinality and eviction
//
// At most MaxSources keys are tracked. A new key beyond that evicts the
// least recently seen key that is not expected, to within the clock's
// resolution: the tracker picks the oldest MaxSources/4 keys in one scan
// and evicts them in order as new keys come, skipping any seen again since
// the scan. An evicted key is forgotten: its counts are gone (its dropped
// and paced counts stay in Stats), it is never reported silent, and if it
// sends again it starts afresh as a new key. Evictions are counted
// (Stats.Evictions). Memory is bounded by MaxSources: about 280 bytes per
// address key and 310 per host key of 20 bytes at MaxSources (the entry,
// its table slots and the eviction candidates; measured by
// TestMemoryBoundedNoRace and TestMemoryBoundedHostsNoRace): 2.8 to 3.1 MB for the
// default 10,000 keys.
//
// # Silence
//
// Run's ticker decides silence once per Resolution, never per event, so a
// burst costs nothing and a key is reported silent between SilentAfter and
// SilentAfter+Resolution after its last event. SilentAfter comes from the
// [Policy]: a global default, and overrides ([Override]) by address, CIDR prefix,
// glob or regular expression. Expected keys are watched before they first
// send. Time for silence starts when Run starts, for keys restored by Load
// and for expected keys alike: after a restart every sender has
// SilentAfter to reconnect, and one that does not is reported silent with
// its true last seen, even when it died while the relay was down. At most
// MaxTransitions transitions are reported per tick; the rest wait for the
// next tick, none lost.
//
// # Rate limits
//
// A key's limit is a GCRA (the token bucket's equivalent kept in one
// timestamp per key, in the key's entry, so that one lookup serves both
// statistics and limit): Burst events at once, EventsPerSecond sustained.
// In drop mode ([Handle.Allow]) the events over the limit are refused and
// counted; in pace mode ([Handle.Pace]) they are accepted and the caller is
// told how long to wait before its next read so that the key's rate falls
// to the limit. A key is in StateLimited for each tick during which its
// limit dropped or paced events.
//
// # Clock
//
// Config.Clock gives the time: relaykit's coarse clock (package clock), the
// process default when nil, which a relay also stamps events with. Tests
// pass a fake clock and call [Tracker.Tick].
//
// # When not to use it
//
// The tracker is for senders, which are few (thousands, tens of
// thousands); it is not a general-purpose cache nor a counter per event
// attribute of unbounded cardinality, and it keeps no history beyond the
// rate's moving average: export Sources to a time-series database for
// that.
package sources
