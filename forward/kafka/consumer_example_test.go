package kafka_test

import (
	"context"
	"fmt"
	"log"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/forward/kafka"
)

// A SIEM-tier relay: a consumer in group "siem" feeds an engine whose Sink
// (here a printer; in a relay, routes ending in delivery queues) delivers
// the events, and offsets are committed only once it did. SIGTERM leaves
// the group after committing what finished, waiting at most 20 seconds.
// (Not run: it needs a broker. The tests in examples/kafkatest run it
// against franz-go's kfake.)
func ExampleConsumer() {
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			fmt.Printf("%s %s\n", batch[i].Host, batch[i].Raw)
		}
		return nil
	})
	eng, err := engine.New(engine.Config{Sink: sink})
	if err != nil {
		log.Fatal(err)
	}
	in := eng.NewInput("kafka")

	c, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: []string{"127.0.0.1:9092"},
		Topics:  []string{"syslog"},
		Group:   "siem",
		Push: func(ctx context.Context, shard uint64, evs []relaykit.Event) (kafka.Ack, error) {
			return in.PushBatch(ctx, shard, evs) // engine.Mark is an Ack
		},
		DeadLetter: func(_ context.Context, topic string, partition int32, offset int64, value []byte, err error) {
			log.Printf("dead letter %s/%d@%d: %v: %q", topic, partition, offset, err, value)
			in.Drop(relaykit.ReasonInvalidJSON, 1) // the engine's ledger balances
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	hard, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = eng.Run(hard) }()
	go func() {
		<-ctx.Done()
		time.AfterFunc(20*time.Second, cancel) // the shutdown deadline
		// Leave the group once the records pushed are finished (until the
		// deadline), committing them.
		_ = c.Shutdown(hard)
	}()
	if err := c.Serve(context.Background()); err != nil {
		log.Print(err)
	}
	_ = eng.Shutdown(hard) // routes what the engine still holds
}

// The record value of EncodingJSON decodes back into the event: a message
// that is not valid UTF-8 keeps its bytes (message_base64), and the
// syslog priority comes back with its flags.
func ExampleDecodeJSON() {
	e := relaykit.Event{Time: 1_763_892_000_000_000_000, Host: []byte("fw-1"), Raw: []byte("bad \xff byte")}
	e.SetPriority(4, 6)
	e.SetFieldString("src_ip", "192.0.2.7")
	value := kafka.AppendJSON(nil, &e)
	fmt.Println(string(value))

	var p fastjson.Parser // reuse one per goroutine
	var got relaykit.Event
	if err := kafka.DecodeJSON(&p, value, &got); err != nil {
		fmt.Println(err)
		return
	}
	fac, _ := got.Facility()
	sev, _ := got.Severity()
	fmt.Printf("%s %q facility=%d severity=%d %s\n", got.EventTime().Format(time.RFC3339), got.Raw, fac, sev, got.Fields[0].Value)
	// Output:
	// {"time":"2025-11-23T10:00:00Z","host":"fw-1","facility":"auth","facility_code":4,"severity":"info","severity_code":6,"message":"bad \ufffd byte","message_base64":"YmFkIP8gYnl0ZQ==","fields":{"src_ip":"192.0.2.7"}}
	// 2025-11-23T10:00:00Z "bad \xff byte" facility=4 severity=6 192.0.2.7
}
