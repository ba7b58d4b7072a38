// Package udp receives datagram log inputs, such as syslog over UDP
// (RFC 5426), one message per datagram: a [Listener] reads its socket in
// batches and hands each batch to a [Handler], counting what it reads, what
// it cuts and what the kernel drops before any reader sees it.
//
//	l, err := udp.New(udp.Config{Name: "syslog", Address: "127.0.0.1:514",
//		Handler: func(reader int, batch []udp.Datagram) {
//			for _, d := range batch {
//				parse(d.Data, d.Addr) // copy what you keep
//			}
//		}})
//	...
//	err = l.Serve(ctx)
//
// On Linux one read is one recvmmsg(2) call, which returns up to
// [Config].BatchSize datagrams; the handler is called once per read with
// all of them, so that it can hand them on at once (one push of a batch to a
// queue rather than one per datagram). Reading allocates nothing once Serve
// has set up its buffers. Elsewhere a read returns one datagram
// (ReadMsgUDPAddrPort), and kernel drops are not counted.
//
// The package imports nothing of relaykit's but the root's vocabulary (for
// relaykit.FieldError). UDP has no flow control: an input built on it must
// never make the handler wait, or the socket fills and the kernel drops
// what follows. Package input's Syslog.ServeDatagrams is such a handler:
// it parses each batch into events and pushes them to an engine without
// waiting (engine.Producer.TryPush), counting what finds the engine full.
//
// # Kernel drops
//
// A datagram that arrives when the socket's receive buffer
// ([Config].ReadBuffer, 4 MiB by default) is full is dropped by the kernel:
// no reader ever sees it, and the sender is not told. The kernel counts
// these drops per socket (the drops column of /proc/net/udp), and the
// listener turns them into [Stats].KernelDrops and calls to
// [Hooks].OnKernelDrops, so that a relay can count them as received and
// dropped: nothing lost goes uncounted. It learns of them in two ways
// (socket(7)):
//
//   - SO_RXQ_OVFL: every datagram read after a drop carries the socket's
//     drop count, as it was when the datagram was queued, in a control
//     message. A reader compares it with the count the listener has
//     accounted for and reports the growth.
//   - SO_MEMINFO: every [Config].DropPollInterval (1 s) and once more
//     before Serve returns, the listener reads the count directly, for
//     drops that no datagram has followed yet (a burst, then silence).
//
// The kernel's count is a 32-bit counter that wraps; the listener widens
// it, and a count older than one already accounted for (readers and the
// poll may report out of order) changes nothing. Packets lost before they
// reach the socket (a full backlog queue, /proc/net/softnet_stat, or the
// network) are not socket drops and are not counted here.
//
// # Read errors
//
// A failed read never stops the listener: a UDP socket reports, as the
// error of its next read, an ICMP error about a datagram it sent (with
// IP_RECVERR), and the kernel may fail a read with ENOMEM. The reader
// counts the error ([Stats].ReadErrors), waits 5 ms, doubling after each
// further error up to 1 s (as net/http's Server.Serve does after an accept
// error), and reads again. [Config].Logger hears of an episode once when it
// starts and once when a read succeeds again.
//
// # Shutdown
//
// When Serve's context ends, the readers stop waiting for new datagrams and
// read what the socket holds, without waiting, for at most
// [Config].DrainTime (200 ms): the datagrams that had arrived are handed
// over rather than thrown away with the socket. Serve then reads the drop
// count a last time, closes the socket and returns. [Listener.Close] closes
// the socket at once.
//
// # Concurrency and ownership
//
// A [Listener]'s methods are safe for concurrent use. [Listener.Serve]
// starts [Config].Readers goroutines that read and call the handler, and
// one that polls the drop count; all of them have returned when Serve
// returns. Calls of the handler for one reader (its first argument) come
// from one goroutine, one at a time; calls for different readers run
// concurrently. The batch and each [Datagram].Data point into the reader's
// buffers, reused by its next read: they are valid only until the handler
// returns.
//
// # When not to use it
//
// For byte streams (syslog over TCP or TLS) use package stream. For a
// UDP client, or a protocol that answers its senders, use net.UDPConn
// directly: the listener only receives.
package udp
