// Package relaytest holds what the relay's tests share: the test config,
// bounded waits, senders and free ports. Only tests import it.
package relaytest
