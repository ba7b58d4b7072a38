// Package clock is relaykit's one coarse clock: the time every package
// reads per event or per batch (receive times, batch ages, window ends,
// rotation checks, rate limits, acknowledgement channel expiry) without a
// system call each time.
//
// A [Clock] ticks only while it is read: a burst of reads starts a
// goroutine that refreshes a cached time every resolution (1 ms for
// [Default]), and 100 ticks without a read end it. Between bursts a read
// calls time.Now. So a program that imports relaykit and reads nothing
// pays nothing, a busy one pays an atomic load per read, and no component
// can stop a clock another component reads: there is no Stop.
//
// # One shape everywhere
//
// Every relaykit Config that reads the time has a field
//
//	Clock *clock.Clock // nil means clock.Default()
//
// (batch, engine, storage, spool, sources, syslog, stream/hec, otlp, input;
// storage/deadletter's Config too). Tests pass a [NewFake] clock and move
// it with [Clock.Set] and [Clock.Add].
//
// # Accuracy
//
// While ticking, a read lags real time by at most the resolution plus
// the scheduling delay of the ticker's goroutine (on a machine with every
// core busy that delay can reach milliseconds). It is wall-clock time
// (time.Now().UnixNano()) that does not go back: a goroutine's reads only
// grow, unless the system's wall clock itself is stepped back (by a
// second or more: the clock then follows it). Its
// resolution is coarse: measure short durations with time.Since, not with
// differences of Nano.
//
// # testing/synctest
//
// A Clock's ticker goroutine belongs to the goroutine whose read started
// it. Code in a synctest bubble should read a clock created inside the
// bubble (or a fake one), not [Default]: a ticker started inside a bubble
// would serve the bubble's fake time to the rest of the process, and one
// started outside would serve real time inside the bubble.
//
// # Compared with go-timecache
//
// github.com/agilira/go-timecache's default cache starts a 500 µs ticker
// at import and never stops unless told to, and once told, every reader
// in the process reads a frozen time. The bench module measures the two
// side by side (read cost, staleness, idle CPU).
package clock
