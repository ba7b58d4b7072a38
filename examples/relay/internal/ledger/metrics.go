package ledger

import (
	"strconv"
	"time"

	libinput "github.com/relaykit/relaykit/input"

	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
	"github.com/relaykit/relaykit/stream/udp"
)

// metric returns the histogram as a Prometheus constant histogram.
func (h *latencyHist) Metric(d *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(latencyBounds))
	var cum uint64
	for i, ub := range latencyBounds {
		cum += h.buckets[i].Load()
		buckets[ub] = cum
	}
	count := cum + h.buckets[len(latencyBounds)].Load()
	return prometheus.MustNewConstHistogram(d, count, float64(h.sumNs.Load())/1e9, buckets, labels...)
}

// prometheus.Collector over the ledger: the counters live in the ledger's
// atomics, so the hot path never touches a metric vector.
var (
	descInputReceived = prometheus.NewDesc("relay_input_received_events_total", "Events received per input.", []string{"input", "kind"}, nil)
	descInputBytes    = prometheus.NewDesc("relay_input_received_bytes_total", "Message bytes received per input.", []string{"input", "kind"}, nil)
	descParseErrors   = prometheus.NewDesc("relay_input_parse_errors_total", "Events forwarded raw because they could not be parsed.", []string{"input"}, nil)
	descTruncated     = prometheus.NewDesc("relay_input_truncated_total", "Frames cut at the maximum message size.", []string{"input"}, nil)
	descInvalid       = prometheus.NewDesc("relay_input_invalid_total", "JSON lines that failed validation (dead-lettered).", []string{"input"}, nil)
	descKernelDropped = prometheus.NewDesc("relay_input_kernel_dropped_total", "UDP datagrams the kernel dropped because the input's socket receive buffer (read_buffer) was full (SO_RXQ_OVFL); counted in received and in dropped{rcvbuf_full}.", []string{"input"}, nil)
	descReadErrors    = prometheus.NewDesc("relay_input_read_errors_total", "Reads of a UDP input's socket that failed; the input backed off and read on.", []string{"input"}, nil)
	descConns         = prometheus.NewDesc("relay_input_connections", "Open connections per input.", []string{"input"}, nil)
	descHanding       = prometheus.NewDesc("relay_input_connections_handing_over", "Connections of a stream input handing a read's events to their worker right now: waiting for room in its ring, or routing and writing the batches those events filled. Near relay_input_connections while busy: the destinations hold the senders back.", []string{"input"}, nil)
	descRefused       = prometheus.NewDesc("relay_input_connections_refused_total", "Connections closed at accept, by reason (per_source: max_connections_per_source; max_connections: refuse_when_full, or no idle connection to evict).", []string{"input", "reason"}, nil)
	descReadBytes     = prometheus.NewDesc("relay_input_read_bytes_total", "Bytes read from stream connections (after TLS): message bytes + framing overhead + discarded + incomplete bytes.", []string{"input"}, nil)
	descReads         = prometheus.NewDesc("relay_input_reads_total", "Reads from the input's sockets: read(2) calls on stream connections (TLS: reads of the TLS layer), recvmmsg(2) calls for UDP. Bytes (or datagrams) per read is read bytes (received events) divided by this.", []string{"input"}, nil)
	descReadBuffers   = prometheus.NewDesc("relay_input_read_buffer_bytes", "Bytes of read buffers the input's connections hold now (bounded by read_buffers, beyond which only frames that need it grow).", []string{"input"}, nil)
	descEvicted       = prometheus.NewDesc("relay_input_connections_evicted_total", "Longest-idle connections closed to make room at max_connections.", []string{"input"}, nil)
	descCut           = prometheus.NewDesc("relay_input_connections_cut_total", "Connections closed by a deadline, by reason (idle; frame_timeout: a frame, or an HEC request's headers or body, not complete in time; handshake_timeout).", []string{"input", "reason"}, nil)
	descHandshakeErr  = prometheus.NewDesc("relay_input_tls_handshake_errors_total", "TLS handshakes that failed other than by timeout.", []string{"input"}, nil)
	descProxyHeaders  = prometheus.NewDesc("relay_input_proxy_headers_total", "PROXY protocol headers read, by command (proxy: it named the sender, the connection's source from then on; local: a v2 LOCAL or v1 UNKNOWN header, such as a balancer's health check, the connection keeping its own address).", []string{"input", "command"}, nil)
	descProxyRefused  = prometheus.NewDesc("relay_input_proxy_refused_total", "Connections closed by the PROXY protocol stage before they were served, by reason (not_allowed: from an address not in proxy_allowed; malformed: a header that could not be read; missing: none, with proxy_protocol required; timeout: not complete within handshake_timeout).", []string{"input", "reason"}, nil)
	descCertInfo      = prometheus.NewDesc("relay_input_tls_certificate_info", "The certificate a TLS input serves, by its SHA-256 fingerprint (what senders pin); always 1.", []string{"input", "sha256"}, nil)
	descCertExpiry    = prometheus.NewDesc("relay_input_tls_certificate_expiry_timestamp_seconds", "When the certificate a TLS input serves expires (NotAfter), in seconds since the epoch.", []string{"input"}, nil)
	descCertReloads   = prometheus.NewDesc("relay_input_tls_certificate_reloads_total", "Certificates a TLS input took after the first: on SIGHUP, or when a handshake found the files changed on disk.", []string{"input"}, nil)
	descCertReloadErr = prometheus.NewDesc("relay_input_tls_certificate_reload_errors_total", "Reloads of a TLS input's certificate and key files that failed (unreadable, or not a pair); the certificate in use was kept.", []string{"input"}, nil)
	descCertFailing   = prometheus.NewDesc("relay_input_tls_certificate_reload_failing", "1 while the last reload of a TLS input's certificate failed (the old one is served; /api/status has the error).", []string{"input"}, nil)
	descAcceptErrors  = prometheus.NewDesc("relay_input_accept_errors_total", "Accepts that failed (EMFILE: out of file descriptors, ...); the input backed off (5 ms doubling to 1 s) and accepted on, connections waiting in the backlog.", []string{"input"}, nil)
	descDiscarded     = prometheus.NewDesc("relay_input_discarded_bytes_total", "Bytes of oversized frames thrown away after the cut at max_message_size.", []string{"input"}, nil)
	descIncomplete    = prometheus.NewDesc("relay_input_incomplete_frames_total", "Frames a connection broke off (reset, timeout, eviction, shutdown) before they were complete; dropped.", []string{"input"}, nil)
	descIncompleteB   = prometheus.NewDesc("relay_input_incomplete_bytes_total", "Bytes of the incomplete frames dropped.", []string{"input"}, nil)
	descEmpty         = prometheus.NewDesc("relay_input_empty_frames_total", "Empty frames (a trailer with nothing before it) skipped.", []string{"input"}, nil)
	descNUL           = prometheus.NewDesc("relay_input_nul_frames_total", "Frames kept whole with a NUL inside (LF-terminated connections).", []string{"input"}, nil)
	descFramingErr    = prometheus.NewDesc("relay_input_framing_errors_total", "Octet-counted frames with a bad header, read up to the next LF or the next LEN SP < header instead.", []string{"input"}, nil)
	descDeadLettered  = prometheus.NewDesc("relay_dead_letter_lines_total", "Lines written to the dead-letter file (invalid input, events a destination rejected).", nil, nil)
	descDeadLetterErr = prometheus.NewDesc("relay_dead_letter_write_errors_total", "Lines the dead-letter file failed to take (lost; their events are counted as dropped all the same).", nil, nil)
	descRouted        = prometheus.NewDesc("relay_routed_events_total", "Events handed to the route table.", nil, nil)
	descQueued        = prometheus.NewDesc("relay_queued_events", "Events in worker rings and batch collectors.", nil, nil)
	descDropped       = prometheus.NewDesc("relay_dropped_events_total", "Events dropped, by reason.", []string{"reason"}, nil)
	descReduced       = prometheus.NewDesc("relay_reduced_events_total", "Events a route's suppress or aggregate step absorbed into a summary, by step: not dropped, a summary event stands for them.", []string{"step"}, nil)
	descProduced      = prometheus.NewDesc("relay_produced_events_total", "Summary events suppress and aggregate steps emitted, by step: new events, sent on to the route's destinations (routed + produced = reached destinations + dropped after routing + reduced).", []string{"step"}, nil)
	descDestIn        = prometheus.NewDesc("relay_destination_events_total", "Events handed to a destination.", []string{"destination", "type"}, nil)
	descDestDelivered = prometheus.NewDesc("relay_destination_delivered_events_total", "Events a destination accepted (archives: written).", []string{"destination", "type"}, nil)
	descDestSpooled   = prometheus.NewDesc("relay_destination_spooled_events_total", "Events written to a destination's spool (spool mode always: every event).", []string{"destination"}, nil)
	descDestPending   = prometheus.NewDesc("relay_destination_pending_events", "Events a destination accepted and has not delivered yet (on disk, in memory, or both).", []string{"destination"}, nil)
	descDestDropped   = prometheus.NewDesc("relay_destination_dropped_events_total", "Events a destination lost (counted in relay_dropped_events_total too).", []string{"destination"}, nil)
	descDestErrors    = prometheus.NewDesc("relay_destination_send_errors_total", "Sends to a destination that left events undelivered (attempts, probes and archive writes).", []string{"destination"}, nil)
	descDestHealthy   = prometheus.NewDesc("relay_destination_healthy", "1 when the destination took the last batch sent.", []string{"destination"}, nil)
	descDestMemory    = prometheus.NewDesc("relay_destination_memory_events", "Events in a destination's memory queue or being sent from it.", []string{"destination"}, nil)
	descDiskFailing   = prometheus.NewDesc("relay_spool_disk_failing", "1 while a destination's spool refuses writes (batches wait in memory until delivered).", []string{"destination"}, nil)
	descDiskErrors    = prometheus.NewDesc("relay_spool_errors_total", "Failed spool operations, by kind (write, sync, read, head).", []string{"destination", "kind"}, nil)
	descSpoolDamage   = prometheus.NewDesc("relay_spool_damaged_records_total", "Damaged spool records and runs of bytes skipped (their events are in relay_dropped_events_total{reason=\"spool_corrupt\"} where known).", []string{"destination"}, nil)
	descSpoolDamageB  = prometheus.NewDesc("relay_spool_damaged_bytes_total", "Bytes of damaged spool records skipped, and of torn tails cut at start.", []string{"destination"}, nil)
	descSpoolMissing  = prometheus.NewDesc("relay_spool_missing_segments_total", "Spool segment files found missing or unreadable.", []string{"destination"}, nil)
	descSpoolEvents   = prometheus.NewDesc("relay_spool_events", "Events waiting in a destination's spool (the backlog).", []string{"destination"}, nil)
	descSpoolBytes    = prometheus.NewDesc("relay_spool_bytes", "Bytes of a destination's spool files.", []string{"destination"}, nil)
	descSpoolAge      = prometheus.NewDesc("relay_spool_oldest_age_seconds", "Age of the oldest batch in a destination's spool; 0 when empty.", []string{"destination"}, nil)
	descArchiveWrites = prometheus.NewDesc("relay_archive_writes_total", "write(2) calls of an archive destination (one per batch, or per 512 KiB of one): written bytes divided by this is the bytes per system call.", []string{"destination"}, nil)
	descArchiveBytes  = prometheus.NewDesc("relay_archive_written_bytes_total", "Bytes an archive destination wrote to its files (lines and their newlines).", []string{"destination"}, nil)
	DescDestLatency   = prometheus.NewDesc("relay_destination_latency_seconds", "Time from receiving an event to its delivery (archives: written), spool time included.", []string{"destination"}, nil)
	descWorkerEvents  = prometheus.NewDesc("relay_worker_events_total", "Events the inputs handed to a worker: through its ring, or (stream inputs, when nothing else drains it) straight into its open batch. Which worker a connection or source uses is fixed for its life: a UDP sender's by a hash of its address, a connection's when it is accepted.", []string{"worker"}, nil)
	descWorkerParks   = prometheus.NewDesc("relay_worker_ring_parks_total", "Times a worker's ring put a goroutine to sleep, by side: consumer (the worker found its ring empty), producer (an input found it full and waited for room).", []string{"worker", "side"}, nil)
	descWorkerBatches = prometheus.NewDesc("relay_worker_batches_total", "Batches a worker handed to the route table, by why they were cut (size: batch_max_events, bytes: batch_max_bytes, time: batch_max_wait, manual: an acknowledging input waited, close: shutdown).", []string{"worker", "reason"}, nil)
)

// The tables of the ledger's metrics, one per Stats type: each input's
// own counters (inputStats) and those of its listener (udp.Stats,
// stream.Stats) and framers (stream.Counters); each worker's
// (engine.WorkerStats); each destination's own (destStats), its queue's
// (delivery.Stats) and its archive's (storage.ArchiveStats).
var (
	inputTable = metrics.Table[InputStats]{
		{Desc: descInputReceived, Type: prometheus.CounterValue, Each: func(s *InputStats, emit func(float64, ...string)) {
			emit(float64(s.In.Stats().Received), s.Kind)
		}},
	}
	// countsTable: an input's counts in the library input's shape
	// (libinput.Stats, InputStats.Counts), with its kind.
	countsTable = metrics.Table[inputCounts]{
		{Desc: descInputBytes, Type: prometheus.CounterValue, Each: func(s *inputCounts, emit func(float64, ...string)) {
			emit(float64(s.Bytes), s.kind)
		}},
		metrics.Counter(descParseErrors, func(s *inputCounts) int64 { return s.ParseErrors }),
		metrics.Counter(descTruncated, func(s *inputCounts) int64 { return s.Truncated }),
		metrics.Counter(descInvalid, func(s *inputCounts) int64 { return s.Invalid }),
	}
	udpTable = metrics.Table[udp.Stats]{
		metrics.Counter(descReadErrors, func(s *udp.Stats) int64 { return s.ReadErrors }),
		metrics.Counter(descReads, func(s *udp.Stats) int64 { return s.Reads }),
	}
	kernelDropTable = metrics.Table[InputStats]{
		metrics.Counter(descKernelDropped, func(s *InputStats) int64 { return s.KernelDropped.Load() }),
	}
	listenerTable = metrics.Table[stream.Stats]{
		metrics.Gauge(descConns, func(s *stream.Stats) int64 { return s.Open }),
		metrics.Counter(descRefused, func(s *stream.Stats) int64 { return s.RefusedPerSource }, "per_source"),
		metrics.Counter(descRefused, func(s *stream.Stats) int64 { return s.RefusedFull }, "max_connections"),
		metrics.Counter(descEvicted, func(s *stream.Stats) int64 { return s.Evicted }),
		metrics.Counter(descCut, func(s *stream.Stats) int64 { return s.CutIdle }, "idle"),
		metrics.Counter(descCut, func(s *stream.Stats) int64 { return s.CutFrameTimeout }, "frame_timeout"),
		metrics.Counter(descCut, func(s *stream.Stats) int64 { return s.CutHandshakeTimeout }, "handshake_timeout"),
		metrics.Counter(descHandshakeErr, func(s *stream.Stats) int64 { return s.HandshakeErrors }),
		metrics.Counter(descAcceptErrors, func(s *stream.Stats) int64 { return s.AcceptErrors }),
		metrics.Counter(descProxyHeaders, func(s *stream.Stats) int64 { return s.ProxyHeaders }, "proxy"),
		metrics.Counter(descProxyHeaders, func(s *stream.Stats) int64 { return s.ProxyLocal }, "local"),
		metrics.Counter(descProxyRefused, func(s *stream.Stats) int64 { return s.ProxyNotAllowed }, "not_allowed"),
		metrics.Counter(descProxyRefused, func(s *stream.Stats) int64 { return s.ProxyMalformed }, "malformed"),
		metrics.Counter(descProxyRefused, func(s *stream.Stats) int64 { return s.ProxyMissing }, "missing"),
		metrics.Counter(descProxyRefused, func(s *stream.Stats) int64 { return s.ProxyTimeout }, "timeout"),
	}
	// certTable: a TLS input's certificate (tlscert.Store).
	certTable = metrics.Table[certState]{
		{Desc: descCertInfo, Type: prometheus.GaugeValue, Each: func(s *certState, emit func(float64, ...string)) {
			emit(1, s.sha256)
		}},
		{Desc: descCertExpiry, Type: prometheus.GaugeValue, Value: func(s *certState) float64 { return float64(s.notAfter.Unix()) }},
		metrics.Counter(descCertReloads, func(s *certState) int64 { return s.Reloads }),
		metrics.Counter(descCertReloadErr, func(s *certState) int64 { return s.ReloadErrors }),
		metrics.Gauge(descCertFailing, func(s *certState) int64 { return metrics.Bool(s.failing) }),
	}
	handingTable = metrics.Table[engine.InputStats]{
		metrics.Gauge(descHanding, func(s *engine.InputStats) int64 { return s.Handing }),
	}
	readBytesTable = metrics.Table[stream.Stats]{
		metrics.Counter(descReadBytes, func(s *stream.Stats) int64 { return s.BytesRead }),
	}
	framingTable = metrics.Table[libinput.FramingStats]{
		metrics.Counter(descDiscarded, func(s *libinput.FramingStats) int64 { return s.DiscardedBytes }),
		metrics.Counter(descIncomplete, func(s *libinput.FramingStats) int64 { return s.IncompleteFrames }),
		metrics.Counter(descIncompleteB, func(s *libinput.FramingStats) int64 { return s.IncompleteBytes }),
		metrics.Counter(descEmpty, func(s *libinput.FramingStats) int64 { return s.EmptyFrames }),
		metrics.Counter(descNUL, func(s *libinput.FramingStats) int64 { return s.NULFrames }),
		metrics.Counter(descFramingErr, func(s *libinput.FramingStats) int64 { return s.FramingErrors }),
	}
	framerReadsTable = metrics.Table[libinput.FramingStats]{
		metrics.Counter(descReads, func(s *libinput.FramingStats) int64 { return s.Reads }),
	}
	readBufferTable = metrics.Table[stream.ReadBudget]{
		metrics.Gauge(descReadBuffers, func(s *stream.ReadBudget) int64 { return s.InUse() }),
	}
	workerTable = metrics.Table[engine.WorkerStats]{
		metrics.Counter(descWorkerEvents, func(s *engine.WorkerStats) int64 { return int64(s.Ring.Pushed + s.Direct) }),
		metrics.Counter(descWorkerParks, func(s *engine.WorkerStats) int64 { return int64(s.Ring.ConsumerParks) }, "consumer"),
		metrics.Counter(descWorkerParks, func(s *engine.WorkerStats) int64 { return int64(s.Ring.ProducerParks) }, "producer"),
		metrics.Counter(descWorkerBatches, func(s *engine.WorkerStats) int64 { return int64(s.Batches.Batches.Size) }, "size"),
		metrics.Counter(descWorkerBatches, func(s *engine.WorkerStats) int64 { return int64(s.Batches.Batches.Bytes) }, "bytes"),
		metrics.Counter(descWorkerBatches, func(s *engine.WorkerStats) int64 { return int64(s.Batches.Batches.Time) }, "time"),
		metrics.Counter(descWorkerBatches, func(s *engine.WorkerStats) int64 { return int64(s.Batches.Batches.Manual) }, "manual"),
		metrics.Counter(descWorkerBatches, func(s *engine.WorkerStats) int64 { return int64(s.Batches.Batches.Close) }, "close"),
	}
	destTable = metrics.Table[DestStats]{
		{Desc: descDestIn, Type: prometheus.CounterValue, Each: func(s *DestStats, emit func(float64, ...string)) {
			emit(float64(s.In.Load()), s.Kind)
		}},
		{Desc: descDestDelivered, Type: prometheus.CounterValue, Each: func(s *DestStats, emit func(float64, ...string)) {
			emit(float64(s.Delivered.Load()), s.Kind)
		}},
		metrics.Counter(descDestDropped, func(s *DestStats) int64 { return s.Dropped.Load() }),
	}
	archiveTable = metrics.Table[storage.ArchiveStats]{
		metrics.Counter(descArchiveWrites, func(s *storage.ArchiveStats) int64 { return s.Writes }),
		metrics.Counter(descArchiveBytes, func(s *storage.ArchiveStats) int64 { return s.Bytes }),
	}
	queueTable = metrics.Table[delivery.Stats]{
		metrics.Counter(descDestErrors, func(s *delivery.Stats) int64 { return s.Failures }),
		metrics.Gauge(descDestHealthy, func(s *delivery.Stats) int64 { return metrics.Bool(s.Healthy) }),
	}
	// spoolTable: a queue with a spool (not the archive's, in memory).
	spoolTable = metrics.Table[delivery.Stats]{
		metrics.Counter(descDestSpooled, func(s *delivery.Stats) int64 { return s.Spool.AppendedEvents + s.Retry.AppendedEvents }),
		metrics.Gauge(descDestPending, func(s *delivery.Stats) int64 { return s.Pending }),
		metrics.Gauge(descDestMemory, func(s *delivery.Stats) int64 { return s.MemoryEvents }),
		metrics.Gauge(descDiskFailing, func(s *delivery.Stats) int64 { return metrics.Bool(s.DiskFailing) }),
		metrics.Counter(descDiskErrors, func(s *delivery.Stats) int64 { return s.Spool.WriteErrors + s.Retry.WriteErrors }, "write"),
		metrics.Counter(descDiskErrors, func(s *delivery.Stats) int64 { return s.Spool.SyncErrors + s.Retry.SyncErrors }, "sync"),
		metrics.Counter(descDiskErrors, func(s *delivery.Stats) int64 { return s.Spool.ReadErrors + s.Retry.ReadErrors }, "read"),
		metrics.Counter(descDiskErrors, func(s *delivery.Stats) int64 { return s.Spool.HeadErrors + s.Retry.HeadErrors }, "head"),
		metrics.Counter(descSpoolDamage, func(s *delivery.Stats) int64 { return s.Spool.Corrupt + s.Retry.Corrupt }),
		metrics.Counter(descSpoolDamageB, func(s *delivery.Stats) int64 {
			return s.Spool.CorruptBytes + s.Retry.CorruptBytes + s.Spool.TornBytes + s.Retry.TornBytes
		}),
		metrics.Counter(descSpoolMissing, func(s *delivery.Stats) int64 { return s.Spool.MissingSegments + s.Retry.MissingSegments }),
		metrics.Gauge(descSpoolEvents, func(s *delivery.Stats) int64 { return s.SpoolEvents }),
		metrics.Gauge(descSpoolBytes, func(s *delivery.Stats) int64 { return s.SpoolBytes }),
		{Desc: descSpoolAge, Type: prometheus.GaugeValue, Value: func(s *delivery.Stats) float64 {
			if s.SpoolOldest.IsZero() {
				return 0
			}
			return time.Since(s.SpoolOldest).Seconds()
		}},
	}
	// ledgerTable: the totals (the ledger's Snapshot).
	ledgerTable = metrics.Table[Snapshot]{
		metrics.Counter(descRouted, func(s *Snapshot) int64 { return s.Routed }),
		metrics.Gauge(descQueued, func(s *Snapshot) int64 { return s.Queued }),
		{Desc: descDropped, Type: prometheus.CounterValue, Each: func(s *Snapshot, emit func(float64, ...string)) {
			for _, r := range dropReasons {
				emit(float64(s.Dropped[r]), r)
			}
		}},
		{Desc: descReduced, Type: prometheus.CounterValue, Each: func(s *Snapshot, emit func(float64, ...string)) {
			for _, step := range reduceSteps {
				emit(float64(s.Reduced[step]), step)
			}
			if s.Reduced["other"]+s.Produced["other"] != 0 { // a step outside reduceSteps counted
				emit(float64(s.Reduced["other"]), "other")
			}
		}},
		{Desc: descProduced, Type: prometheus.CounterValue, Each: func(s *Snapshot, emit func(float64, ...string)) {
			for _, step := range reduceSteps {
				emit(float64(s.Produced[step]), step)
			}
			if s.Reduced["other"]+s.Produced["other"] != 0 {
				emit(float64(s.Produced["other"]), "other")
			}
		}},
	}
	deadLetterTable = metrics.Table[Ledger]{
		metrics.Counter(descDeadLettered, func(l *Ledger) int64 { return l.deadLettered.Load() }),
		metrics.Counter(descDeadLetterErr, func(l *Ledger) int64 { return l.deadLetterErrors.Load() }),
	}
)

func (l *Ledger) Describe(ch chan<- *prometheus.Desc) {
	metrics.DescribeAll(ch, inputTable, countsTable, udpTable, kernelDropTable, listenerTable, handingTable, readBytesTable, framingTable,
		framerReadsTable, readBufferTable, certTable, workerTable, destTable, archiveTable, queueTable, spoolTable, ledgerTable,
		deadLetterTable, metrics.Table[latencyHist]{{Desc: DescDestLatency}}, stepTable)
	metrics.DescribeAll(ch, parseTables...)
}

func (l *Ledger) Collect(ch chan<- prometheus.Metric) {
	inputs, dests := l.Inputs(), l.Dests()
	snap := l.Snapshot()
	es := l.Engine.Stats()
	for _, in := range inputs {
		inputTable.Collect(ch, in, in.Name)
		c := inputCounts{kind: in.Kind, Stats: in.Counts()}
		countsTable.Collect(ch, &c, in.Name)
		if in.UDP != nil {
			us := in.UDP.Stats()
			udpTable.Collect(ch, &us, in.Name)
			kernelDropTable.Collect(ch, in, in.Name)
		}
		if in.Certs != nil {
			cs := certStateOf(in.Certs)
			certTable.Collect(ch, &cs, in.Name)
		}
		ls, ok := in.ListenerStats()
		if !ok {
			continue
		}
		is := in.In.Stats()
		listenerTable.Collect(ch, &ls, in.Name)
		handingTable.Collect(ch, &is, in.Name)
		if in.Frames {
			readBytesTable.Collect(ch, &ls, in.Name)
			framingTable.Collect(ch, &c.Framing, in.Name)
		}
		if in.Reads {
			framerReadsTable.Collect(ch, &c.Framing, in.Name)
			if in.Buffers != nil {
				readBufferTable.Collect(ch, in.Buffers, in.Name)
			}
		}
	}
	for i := range es.Workers {
		workerTable.Collect(ch, &es.Workers[i], strconv.Itoa(i))
	}
	deadLetterTable.Collect(ch, l)
	ledgerTable.Collect(ch, &snap)
	l.collectSteps(ch)
	l.collectParse(ch)
	for _, d := range dests {
		destTable.Collect(ch, d, d.Name)
		ch <- d.Latency.Metric(DescDestLatency, d.Name)
		if d.Archive != nil {
			as := d.Archive.Stats()
			archiveTable.Collect(ch, &as, d.Name)
		}
		if d.Queue == nil {
			continue
		}
		q := d.Queue.Stats()
		queueTable.Collect(ch, &q, d.Name)
		if d.Spooled { // not the archive's: written on the caller's goroutine
			spoolTable.Collect(ch, &q, d.Name)
		}
	}
}

// certState is a certificate store's state, as certTable exports it.
type certState struct {
	tlscert.Stats
	sha256   string
	notAfter time.Time
	failing  bool
}

func certStateOf(c *tlscert.Store) certState {
	return certState{Stats: c.Stats(), sha256: c.Fingerprint().String(), notAfter: c.Leaf().NotAfter, failing: c.Err() != nil}
}

// inputCounts is an input's counts with its kind (the label of
// relay_input_received_bytes_total).
type inputCounts struct {
	kind string
	libinput.Stats
}
