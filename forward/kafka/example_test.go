package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward/kafka"
)

// A sink keyed by host with zstd batches. An event over MaxRecordBytes is
// never produced: Send reports it as a permanent failure (a delivery.Queue
// in front would hand it to its dead-letter handler), like an event HEC
// rejects.
func Example() {
	sink, err := kafka.New(kafka.Config{
		Brokers:        []string{"127.0.0.1:9092"},
		Topic:          "syslog",
		Key:            kafka.KeyHost,
		Compression:    kafka.CompressionZstd,
		MaxRecordBytes: 1 << 10,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sink.Close()

	big := relaykit.Event{Host: []byte("fw-1"), Raw: bytes.Repeat([]byte("x"), 2<<10)}
	err = sink.Send(context.Background(), []relaykit.Event{big})
	var be *relaykit.BatchError
	if errors.As(err, &be) {
		for _, f := range be.Failed {
			fmt.Printf("events %d-%d %s (permanent %t): %v\n", f.From, f.To-1, f.Reason, f.Permanent, f.Err)
		}
	}
	fmt.Printf("%+v\n", sink.Stats())
	// Output:
	// events 0-0 too_large (permanent true): forward: send to kafka: record of 2088 bytes exceeds MaxRecordBytes 1024
	// {EventsSent:0 BytesSent:0 EventsFailed:1 TooLarge:1 ProduceErrors:0 Batches:1}
}

// The record value of the default encoding: the archive's JSON object.
func ExampleAppendJSON() {
	e := relaykit.Event{Time: 1_763_892_000_000_000_000, Host: []byte("fw-1"), Source: []byte("sshd"), Raw: []byte("Accepted publickey for root")}
	e.SetFieldString("src_ip", "192.0.2.7")
	fmt.Println(string(kafka.AppendJSON(nil, &e)))
	// Output:
	// {"time":"2025-11-23T10:00:00Z","host":"fw-1","source":"sshd","message":"Accepted publickey for root","fields":{"src_ip":"192.0.2.7"}}
}
