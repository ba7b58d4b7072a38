// Package kafkatest holds the Kafka tests of relaykit: the forward/kafka
// sink and consumer (fed into a real engine: commits only after delivery,
// kills, rebalances, dead letters, stalls), and the relay's Kafka input
// and two-tier deployment, run against
// franz-go's in-process kfake clusters on 127.0.0.1 and against Debian's
// kcat (librdkafka) for interoperability.
//
// It is its own module because kfake needs Go 1.26 while the library and
// the examples stay on Go 1.25; its go.mod points at the working copies
// with replace lines, so it tests the code beside it.
package kafkatest
