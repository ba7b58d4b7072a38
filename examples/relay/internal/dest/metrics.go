package dest

import (
	"maps"
	"slices"

	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/forward/kafka"
)

var (
	descKafkaProduceErrors = prometheus.NewDesc("relay_kafka_produce_errors_total", "Produce requests or partitions that failed and were retried by the Kafka client (leader changes, broker restarts).", []string{"destination"}, nil)
	descKafkaTooLarge      = prometheus.NewDesc("relay_kafka_too_large_total", "Events over max_record_bytes (dead-lettered).", []string{"destination"}, nil)
)

// kafkaSinkTable exports a kafka destination's own counters
// (kafka.Stats; the ledger has its delivered, spooled and dropped).
var kafkaSinkTable = metrics.Table[kafka.Stats]{
	metrics.Counter(descKafkaProduceErrors, func(s *kafka.Stats) int64 { return s.ProduceErrors }),
	metrics.Counter(descKafkaTooLarge, func(s *kafka.Stats) int64 { return s.TooLarge }),
}

type Collector map[string]*Destination

func (c Collector) Describe(ch chan<- *prometheus.Desc) { metrics.DescribeAll(ch, kafkaSinkTable) }

func (c Collector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range slices.Sorted(maps.Keys(c)) {
		if k, ok := c[name].sink.(*kafka.Sink); ok {
			s := k.Stats()
			kafkaSinkTable.Collect(ch, &s, name)
		}
	}
}
