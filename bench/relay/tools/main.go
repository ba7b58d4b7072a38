// Command tools holds the helpers of the end-to-end relay benchmark
// (bench/relay/run.sh):
//
//	tools hec -listen 127.0.0.1:8088 -token T   counting Splunk HEC receiver
//	          [-unique]                         also count distinct loggen messages
//	tools mkgeo -dir D -networks N              GeoLite2-City and -ASN test databases
//	tools lines -n N > file                     syslog lines with IPs (sshd, firewall, app)
//	tools send -addr A -file F -duration D      replay F's lines over TCP as fast as possible
//	tools seq -addr A -rate R -duration D       numbered loggen-style lines over TCP at a rate;
//	                                            prints the count sent even when the relay dies
//	tools hecsend -url U -token T -duration D   gzipped HEC requests of 100 events (forward.HEC-like)
//	          [-conns N] [-events 100]          as fast as answered; counts events answered Success
//	tools udpsend -addr A -rate R -duration D   loggen-like 256-byte RFC 3164 datagrams at R per
//	          [-conns N] [-size S]              second over N sockets, sent with sendmmsg(2) in
//	                                            batches of 64 (loggen's UDP tops out lower here)
//	tools otlpsend, tools otelcol               OTLP load and the Collector's receiver (otlp.go)
//	tools idle -addr A -conns N                 N connections that send one line each and then
//	                                            stay open, idle, until killed (from 127.0.x.y,
//	                                            60 per source address); prints "ready N"
//	tools biglines -n N -kind syslog|cef|fortigate > F    realistic 1.2 KB RFC 5424 lines (app, web, audit,
//	                                            kubelet) or CEF firewall records (gzip: about 3x)
//	tools dcr -listen 127.0.0.1:8089            counting Logs Ingestion stand-in (token endpoint
//	                                            and gzip JSON rows, 204); GET /count[?stream=S]
//
// The HEC receiver accepts /services/collector/event (gzip or not), answers
// {"text":"Success","code":0}, and serves the number of events received at
// GET /count. It counts events by their "event" keys, which JSON escaping
// keeps out of string values, so it costs little CPU next to the relay.
// POST /down makes it answer every data request 503 (code 9, server busy)
// and its health endpoint 503 (code 18) until POST /up: an outage. With
// -unique it also counts distinct loggen messages (by their "seq: N,
// thread: T" and run) so lost and duplicated events can be told apart;
// GET /count then prints events, requests, bytes and distinct messages.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"golang.org/x/net/ipv4"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: tools hec|mkgeo|lines [flags]")
	}
	switch os.Args[1] {
	case "hec":
		hec(os.Args[2:])
	case "mkgeo":
		mkgeo(os.Args[2:])
	case "lines":
		lines(os.Args[2:])
	case "send":
		send(os.Args[2:])
	case "seq":
		seq(os.Args[2:])
	case "hecsend":
		hecsend(os.Args[2:])
	case "idle":
		idle(os.Args[2:])
	case "udpsend":
		udpsend(os.Args[2:])
	case "otlpsend", "otelcol": // otlp.go
		map[string]func([]string){"otlpsend": otlpsend, "otelcol": otelcol}[os.Args[1]](os.Args[2:])
	case "biglines":
		biglines(os.Args[2:])
	case "dcr":
		dcr(os.Args[2:])
	default:
		log.Fatalf("unknown tool %q", os.Args[1])
	}
}

func hec(args []string) {
	fs := flag.NewFlagSet("hec", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:8088", "address")
	token := fs.String("token", "bench-token", "accepted token")
	unique := fs.Bool("unique", false, "count distinct loggen messages")
	_ = fs.Parse(args)
	var events, requests, bytesIn atomic.Int64
	var down atomic.Bool
	var umu sync.Mutex
	seen := map[string]struct{}{}
	key := []byte(`"event":`)
	mux := http.NewServeMux()
	mux.HandleFunc("/services/collector/health", func(w http.ResponseWriter, _ *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"text":"HEC is unhealthy, queues are full","code":18}`)
			return
		}
		fmt.Fprint(w, `{"text":"HEC is healthy","code":17}`)
	})
	mux.HandleFunc("POST /down", func(http.ResponseWriter, *http.Request) { down.Store(true) })
	mux.HandleFunc("POST /up", func(http.ResponseWriter, *http.Request) { down.Store(false) })
	mux.HandleFunc("/services/collector/event", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"text":"Server is busy","code":9}`)
			return
		}
		if r.Header.Get("Authorization") != "Splunk "+*token {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"text":"Invalid authorization","code":3}`)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"text":"Invalid data format","code":6}`)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"text":"Invalid data format","code":6}`)
			return
		}
		events.Add(int64(bytes.Count(b, key)))
		if *unique {
			umu.Lock()
			for rest := b; ; {
				i := bytes.Index(rest, []byte("seq: "))
				if i < 0 {
					break
				}
				rest = rest[i:]
				end := bytes.Index(rest, []byte(", runid"))
				if end < 0 {
					break
				}
				seen[string(rest[:end])] = struct{}{}
				rest = rest[end:]
			}
			umu.Unlock()
		}
		requests.Add(1)
		bytesIn.Add(int64(len(b)))
		fmt.Fprint(w, `{"text":"Success","code":0}`)
	})
	mux.HandleFunc("/count", func(w http.ResponseWriter, _ *http.Request) {
		umu.Lock()
		n := len(seen)
		umu.Unlock()
		fmt.Fprintf(w, "%d %d %d %d\n", events.Load(), requests.Load(), bytesIn.Load(), n)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	_ = srv.Serve(ln)
	fmt.Printf("hec: events=%d requests=%d bytes=%d\n", events.Load(), requests.Load(), bytesIn.Load())
}

// mkgeo writes City and ASN databases with n /24 networks in 10.0.0.0/8
// and 198.18.0.0/15 (benchmarking ranges).
func mkgeo(args []string) {
	fs := flag.NewFlagSet("mkgeo", flag.ExitOnError)
	dir := fs.String("dir", ".", "output directory")
	n := fs.Int("networks", 20000, "networks per database")
	_ = fs.Parse(args)
	countries := []string{"DE", "FR", "US", "JP", "BR", "IN", "NL", "SE"}
	for _, kind := range []string{"GeoLite2-City", "GeoLite2-ASN"} {
		tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: kind, IncludeReservedNetworks: true, IPVersion: 6, RecordSize: 28})
		if err != nil {
			log.Fatal(err)
		}
		for i := range *n {
			ip := net.IPv4(10, byte(i>>8), byte(i), 0)
			if i >= 1<<16 {
				ip = net.IPv4(198, 18+byte(i>>16&1), byte(i>>8), 0)
			}
			ipn := &net.IPNet{IP: ip, Mask: net.CIDRMask(24, 32)}
			var rec mmdbtype.Map
			if kind == "GeoLite2-City" {
				c := countries[i%len(countries)]
				rec = mmdbtype.Map{
					"country":  mmdbtype.Map{"iso_code": mmdbtype.String(c), "names": mmdbtype.Map{"en": mmdbtype.String("Country " + c)}},
					"city":     mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String(fmt.Sprintf("City %d", i%500))}},
					"location": mmdbtype.Map{"latitude": mmdbtype.Float64(float64(i%180) - 90), "longitude": mmdbtype.Float64(float64(i%360) - 180)},
				}
			} else {
				rec = mmdbtype.Map{
					"autonomous_system_number":       mmdbtype.Uint32(64512 + i%1000),
					"autonomous_system_organization": mmdbtype.String(fmt.Sprintf("AS org %d", i%1000)),
				}
			}
			if err := tree.Insert(ipn, rec); err != nil {
				log.Fatal(err)
			}
		}
		f, err := os.Create(filepath.Join(*dir, kind+".mmdb"))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := tree.WriteTo(f); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

// lines writes n syslog lines of ~200 bytes in the shapes of sshd, firewall
// and application logs, each with an address from the mkgeo networks; about
// one in ten matches an "error" route.
func lines(args []string) {
	fs := flag.NewFlagSet("lines", flag.ExitOnError)
	n := fs.Int("n", 10000, "lines")
	_ = fs.Parse(args)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for i := range *n {
		ip := fmt.Sprintf("10.%d.%d.%d", (i>>8)&0x4f, i&0xff, i%250+1)
		switch i % 10 {
		case 0, 1, 2:
			fmt.Fprintf(w, "<38>1 2026-11-22T01:39:01.123456Z gw%02d sshd %d - - Failed password for invalid user admin%d from %s port %d ssh2\n", i%7, 1000+i%97, i%13, ip, 40000+i%20000)
		case 3, 4, 5:
			fmt.Fprintf(w, "<134>1 2026-11-22T01:39:01.123456Z fw%02d kernel - - - [UFW BLOCK] IN=eth0 OUT= MAC=00:16:3e:aa:bb:cc SRC=%s DST=192.0.2.10 LEN=60 PROTO=TCP SPT=%d DPT=22\n", i%3, ip, 40000+i%20000)
		case 6:
			fmt.Fprintf(w, "<11>1 2026-11-22T01:39:01.123456Z app%02d billing %d - - ERROR payment failed for order %d client=%s reason=timeout after 3 retries\n", i%5, 2000+i%31, i, ip)
		default:
			fmt.Fprintf(w, "<14>1 2026-11-22T01:39:01.123456Z web%02d nginx %d - - %s - - \"GET /api/v1/items/%d HTTP/1.1\" 200 %d \"-\" \"curl/8.5.0\"\n", i%9, 3000+i%17, ip, i, 512+i%4096)
		}
	}
}

// send writes the lines of a file over conns TCP connections, in 256 KiB
// writes, until the duration has passed, and prints "count=N" (whole lines
// written), like loggen. It is a much cheaper generator than loggen's file
// reader, so the relay gets the CPU.
func send(args []string) {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5514", "relay TCP address")
	file := fs.String("file", "lines.txt", "LF-terminated lines")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	conns := fs.Int("conns", 2, "connections")
	rate := fs.Int("rate", 0, "events per second over all connections, paced per chunk; 0 means as fast as possible")
	_ = fs.Parse(args)
	data, err := os.ReadFile(*file)
	if err != nil {
		log.Fatal(err)
	}
	// Chunks of whole lines, about 256 KiB each (16 KiB when paced, so
	// events arrive evenly rather than in bursts).
	chunkSize := 256 << 10
	if *rate > 0 {
		chunkSize = 16 << 10
	}
	var chunks [][]byte
	var counts []int64
	for len(data) > 0 {
		end := min(len(data), chunkSize)
		if i := bytes.LastIndexByte(data[:end], '\n'); i >= 0 {
			end = i + 1
		}
		chunks = append(chunks, data[:end])
		counts = append(counts, int64(bytes.Count(data[:end], []byte{'\n'})))
		data = data[end:]
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(*dur)
	start := time.Now()
	for range *conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", *addr)
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			var sent int64
			for i := 0; time.Now().Before(deadline); i = (i + 1) % len(chunks) {
				if *rate > 0 { // wait until this connection's share of the rate allows the chunk
					due := start.Add(time.Duration(float64(sent) / (float64(*rate) / float64(*conns)) * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				if _, err := c.Write(chunks[i]); err != nil {
					log.Fatal(err)
				}
				sent += counts[i]
				total.Add(counts[i])
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("average rate = %.2f msg/sec, count=%d, time=%.3f\n", float64(total.Load())/el, total.Load(), el)
}

// seq sends numbered lines ("seq: N, thread: 0000, runid: R, ...", the
// pattern loggen uses and hec -unique counts) over one TCP connection at a
// fixed rate, and prints "count=N" when the time is up or a write fails
// (the relay was killed).
func seq(args []string) {
	fs := flag.NewFlagSet("seq", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5514", "relay TCP address")
	rate := fs.Int("rate", 20000, "events per second")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	_ = fs.Parse(args)
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	runid := time.Now().UnixNano() % 1e9
	start := time.Now()
	var n int64
	var buf []byte
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	for now := range tk.C {
		el := now.Sub(start)
		if el > *dur {
			break
		}
		buf = buf[:0]
		prev := n
		for due := int64(el.Seconds() * float64(*rate)); n < due; n++ {
			buf = fmt.Appendf(buf, "<14>1 2026-01-01T00:00:00Z h app - - - seq: %010d, thread: 0000, runid: %d, PADDPADDPADDPADDPADDPADDPADD\n", n, runid)
		}
		if _, err := c.Write(buf); err != nil {
			n = prev // lines of a failed write may or may not have been read
			break
		}
	}
	fmt.Printf("count=%d\n", n)
}

// hecsend posts gzipped requests of -events forward.HEC-like events (time,
// host, source, sourcetype, a message of about 190 bytes, the priority and
// one more indexed field) to an HEC endpoint over -conns kept-alive
// connections, each waiting for its answer before the next request, for
// -duration, and prints the events answered Success as "count=N" (the
// loggen format run.sh reads) and those answered otherwise.
func hecsend(args []string) {
	fs := flag.NewFlagSet("hecsend", flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:8088/services/collector/event", "HEC event endpoint")
	token := fs.String("token", "", "HEC token")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	conns := fs.Int("conns", 4, "connections, one request in flight on each")
	events := fs.Int("events", 100, "events per request")
	_ = fs.Parse(args)
	// A few distinct bodies, compressed once: the sender's CPU stays low.
	var bodies [][]byte
	for b := range 16 {
		var raw bytes.Buffer
		for i := range *events {
			fmt.Fprintf(&raw, `{"time":1700000000.%03d,"host":"web-%02d","source":"nginx","sourcetype":"access_combined","event":"10.%d.%d.7 - - [22/Nov/2026:10:00:00 +0000] \"GET /api/v1/items/%d?page=%d HTTP/1.1\" 200 5123 \"-\" \"Mozilla/5.0 (X11; Linux x86_64) bench/1.0\"","fields":{"facility":"local0","severity":"info","dc":"eu-west-%d"}}`,
				i%1000, b, b, i%250, b*1000+i, i%7, b%3)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(raw.Bytes())
		_ = zw.Close()
		bodies = append(bodies, gz.Bytes())
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}
	cl := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(*dur)
	start := time.Now()
	for c := range *conns {
		wg.Go(func() {
			for i := c; time.Now().Before(deadline); i++ {
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(bodies[i%len(bodies)]))
				req.Header.Set("Authorization", "Splunk "+*token)
				req.Header.Set("Content-Encoding", "gzip")
				resp, err := cl.Do(req)
				if err != nil {
					log.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(int64(*events))
				} else {
					bad.Add(int64(*events))
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("average rate = %.2f msg/sec, count=%d, refused=%d, time=%.3f\n", float64(ok.Load())/el, ok.Load(), bad.Load(), el)
}

// idle opens conns connections to addr, from source addresses 127.0.x.y
// (60 per address, under the relay's max_connections_per_source), sends one
// syslog line on each, prints "ready N" and holds them open until it is
// killed: senders that have nothing more to say.
func idle(args []string) {
	fs := flag.NewFlagSet("idle", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5514", "relay TCP address")
	n := fs.Int("conns", 1000, "connections")
	_ = fs.Parse(args)
	conns := make([]net.Conn, 0, *n)
	for i := range *n {
		src := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/60), byte(1+i%60))}
		d := net.Dialer{LocalAddr: src, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", *addr)
		if err != nil {
			log.Fatalf("connection %d: %v", i, err)
		}
		if _, err := fmt.Fprintf(c, "<13>1 - idle%d app - - - one line, then quiet\n", i); err != nil {
			log.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	fmt.Printf("ready %d\n", len(conns))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	for _, c := range conns {
		c.Close()
	}
}

// udpsend sends loggen-like RFC 3164 datagrams of -size bytes to -addr at
// -rate datagrams per second over -conns sockets, each paced every
// millisecond and writing with sendmmsg(2) in batches of up to 64, for
// -duration, and prints "count=N" (the loggen format run.sh reads). A
// datagram the kernel refused to send (EAGAIN, ENOBUFS) is not counted.
func udpsend(args []string) {
	fs := flag.NewFlagSet("udpsend", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5514", "relay UDP address")
	rate := fs.Int("rate", 250000, "datagrams per second over all sockets")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	conns := fs.Int("conns", 2, "sockets")
	size := fs.Int("size", 256, "datagram size in bytes")
	_ = fs.Parse(args)
	var total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for t := range *conns {
		wg.Go(func() {
			c, err := net.Dial("udp", *addr)
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			pc := ipv4.NewPacketConn(c.(*net.UDPConn))
			const batch = 64
			msgs := make([]ipv4.Message, batch)
			bufs := make([][]byte, batch)
			for i := range msgs {
				bufs[i] = make([]byte, 0, *size)
				msgs[i].Buffers = [][]byte{nil}
			}
			share := float64(*rate) / float64(*conns)
			var n int64
			tk := time.NewTicker(time.Millisecond)
			defer tk.Stop()
			for now := range tk.C {
				el := now.Sub(start)
				if el > *dur {
					break
				}
				due := int64(el.Seconds() * share)
				for n < due {
					k := int(min(due-n, batch))
					for i := range k {
						b := fmt.Appendf(bufs[i][:0], "<38>Nov 26 00:00:00 localhost prg%05d[1234]: seq: %010d, thread: %04d, runid: %d, stamp: 2026-11-26T00:00:00 ", t, n+int64(i), t, start.Unix())
						for len(b) < *size {
							b = append(b, "PADD"...)
						}
						msgs[i].Buffers[0] = b[:*size]
					}
					sent, err := pc.WriteBatch(msgs[:k], 0)
					if err != nil && sent <= 0 {
						break // the socket buffer is full: try again at the next tick
					}
					n += int64(sent)
					total.Add(int64(sent))
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("average rate = %.2f msg/sec, count=%d, time=%.3f\n", float64(total.Load())/el, total.Load(), el)
}
