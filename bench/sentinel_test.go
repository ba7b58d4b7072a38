package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// benchEvent fills e with a typical relayed syslog event whose message
// carries seq.
func benchEvent(e *relaykit.Event, seq int) {
	e.Reset()
	e.ReceiveTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano() + int64(seq)
	e.Time = e.ReceiveTime
	e.Host = append(e.Host, "web-frontend-07.example.net"...)
	e.Source = append(e.Source, "nginx"...)
	e.SetPriority(16, 6)
	e.Raw = append(e.Raw, "seq="...)
	e.Raw = strconv.AppendInt(e.Raw, int64(seq), 10)
	e.Raw = append(e.Raw, ` 203.0.113.7 - - "GET /api/v1/items?id=42 HTTP/1.1" 200 1532 "-" "Mozilla/5.0 (X11; Linux x86_64)"`...)
	e.SetFieldString("client_ip", "203.0.113.7")
	e.SetFieldString("status", "200")
	e.SetFieldString("user", `alice "a"`)
}

// BenchmarkSentinelEncode measures encoding one event as a Logs Ingestion
// API row (one op = one event).
func BenchmarkSentinelEncode(b *testing.B) {
	s, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
		Stream: "Custom-Relay_CL", TokenSource: forward.StaticToken("t"),
		Columns: forward.SentinelColumns{Source: "App", Severity: "SeverityLevel"},
		Fields:  []forward.SentinelField{{Field: "client_ip", Column: "ClientIP"}, {Field: "status", Column: "Status"}, {Field: "user", Column: "UserName"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	var e relaykit.Event
	benchEvent(&e, 1)
	buf := make([]byte, 0, 4096)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		buf = s.AppendEvent(buf[:0], &e)
		n++
	}
	b.SetBytes(int64(len(buf)))
	var row map[string]any
	if err := json.Unmarshal(buf, &row); err != nil || row["RawData"] != string(e.Raw) || n != b.N {
		b.Fatalf("bad row %q: %v", buf, err)
	}
}

// BenchmarkSyslogSink measures the syslog sink sending batches of 256
// events to a local Go receiver (one op = one event): RFC 5424 with octet
// counting over TCP, or one datagram per message over UDP with sendmmsg.
// The receiver checks that messages arrive in order; over TCP every one
// must arrive, over UDP the loss is reported as dropped/op.
func BenchmarkSyslogSink(b *testing.B) {
	for _, transport := range []string{"tcp", "udp"} {
		b.Run("transport="+transport, func(b *testing.B) {
			benchSyslog(b, transport)
		})
	}
}

type recvResult struct {
	count   int
	ordered bool
}

func benchSyslog(b *testing.B, transport string) {
	const batchSize = 256
	var addr string
	got := make(chan recvResult, 1)
	var closeRecv func()
	switch transport {
	case "tcp":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr = l.Addr().String()
		closeRecv = func() { _ = l.Close() }
		go func() {
			c, err := l.Accept()
			if err != nil {
				got <- recvResult{}
				return
			}
			got <- readOctetCounted(c)
		}()
	case "udp":
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		_ = pc.(*net.UDPConn).SetReadBuffer(8 << 20)
		addr = pc.LocalAddr().String()
		closeRecv = func() { _ = pc.Close() }
		go func() { got <- readDatagrams(pc) }()
	}
	sink, err := forward.NewSyslog(forward.SyslogConfig{
		Network: transport, Address: addr, SendBuffer: 4 << 20, ProcIDField: "status",
	})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]relaykit.Event, batchSize)
	for i := range batch {
		benchEvent(&batch[i], 0) // warm the buffers
	}
	ctx := context.Background()
	seq, fill := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		benchEvent(&batch[fill], seq)
		seq++
		fill++
		if fill == batchSize {
			if err := sink.Send(ctx, batch); err != nil {
				b.Fatal(err)
			}
			fill = 0
		}
	}
	if fill > 0 {
		if err := sink.Send(ctx, batch[:fill]); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := b.Elapsed()
	extra := 0
	if transport == "udp" {
		extra = 1
		// A final marker datagram tells the receiver the run is over.
		var end relaykit.Event
		end.Raw = []byte("end")
		_ = sink.Send(ctx, []relaykit.Event{end})
	}
	_ = sink.Close()
	r := <-got
	closeRecv()
	b.ReportMetric(float64(seq)/elapsed.Seconds(), "events/s")
	if !r.ordered {
		b.Fatal("messages arrived out of order")
	}
	if transport == "tcp" && r.count != seq {
		b.Fatalf("received %d of %d messages", r.count, seq)
	}
	if transport == "udp" {
		b.ReportMetric(float64(seq-r.count)/float64(seq), "dropped/op")
	}
	if st := sink.Stats(); st.Events != int64(seq+extra) || st.Failed != 0 {
		b.Fatalf("stats %+v after %d events", st, seq)
	}
}

// seqOf returns the number after "seq=" in a syslog message, or -1.
func seqOf(msg []byte) int {
	for i := 0; i+4 <= len(msg); i++ {
		if msg[i] == 's' && string(msg[i:i+4]) == "seq=" {
			n, j := 0, i+4
			for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
				n = n*10 + int(msg[j]-'0')
				j++
			}
			return n
		}
	}
	return -1
}

func readOctetCounted(c net.Conn) recvResult {
	defer c.Close()
	br := bufio.NewReaderSize(c, 1<<20)
	r := recvResult{ordered: true}
	buf := make([]byte, 0, 4096)
	for {
		n := 0
		for {
			ch, err := br.ReadByte()
			if err != nil {
				return r
			}
			if ch == ' ' {
				break
			}
			n = n*10 + int(ch-'0')
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return r
		}
		if seqOf(buf) != r.count {
			r.ordered = false
		}
		r.count++
	}
}

func readDatagrams(pc net.PacketConn) recvResult {
	uc := pc.(*net.UDPConn)
	buf := make([]byte, 4096)
	r := recvResult{ordered: true}
	last := -1
	for {
		_ = uc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := uc.Read(buf) // Read, unlike ReadFrom/ReadBatch, allocates no address
		if err != nil {
			return r
		}
		s := seqOf(buf[:n])
		if s < 0 {
			return r // the end marker
		}
		if s <= last {
			r.ordered = false
		}
		last = s
		r.count++
	}
}
