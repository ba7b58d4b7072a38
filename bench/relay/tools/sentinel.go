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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/relaykit/relaykit/bench/internal/reallines"
)

// biglines writes n realistic lines of about 1.2 KB (reallines): RFC 5424
// application, web, audit and Kubernetes logs (-kind syslog) or CEF
// firewall records (-kind cef), or FortiGate key=value logs (-kind fortigate).
func biglines(args []string) {
	fs := flag.NewFlagSet("biglines", flag.ExitOnError)
	n := fs.Int("n", 50000, "lines")
	kind := fs.String("kind", "syslog", "syslog, cef or fortigate")
	seed := fs.Uint64("seed", 1, "generator seed")
	_ = fs.Parse(args)
	g := reallines.New(*seed)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var b []byte
	for range *n {
		switch *kind {
		case "syslog":
			b = g.Syslog(b[:0])
		case "cef":
			b = g.CEF(b[:0])
		case "fortigate":
			b = g.FortiGate(b[:0])
		default:
			log.Fatalf("biglines: unknown kind %q", *kind)
		}
		b = append(b, '\n')
		_, _ = w.Write(b)
	}
}

// dcr is a minimal Azure Monitor Logs Ingestion stand-in: the Entra ID
// token endpoint (any tenant, client and secret; one bearer token) and
// POST /dataCollectionRules/{id}/streams/{stream}, which accepts a gzipped
// (or plain) JSON array of rows with that token, counts the rows by their
// {"TimeGenerated": openings (which JSON escaping keeps out of string
// values) and answers 204. GET /count prints rows, requests, wire bytes
// and decompressed bytes; per stream with GET /count?stream=S.
func dcr(args []string) {
	fs := flag.NewFlagSet("dcr", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:8089", "address")
	_ = fs.Parse(args)
	const token = "bench-dcr-token"
	type counts struct{ rows, requests, wire, raw atomic.Int64 }
	var mu sync.Mutex
	streams := map[string]*counts{}
	total := new(counts)
	get := func(s string) *counts {
		mu.Lock()
		defer mu.Unlock()
		c := streams[s]
		if c == nil {
			c = new(counts)
			streams[s] = c
		}
		return c
	}
	rowKey := []byte(`{"TimeGenerated":`)
	readers := sync.Pool{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":%q}`, token)
	})
	mux.HandleFunc("POST /dataCollectionRules/{id}/streams/{stream}", func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, code, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"code":%q,"message":%q}}`, code, msg)
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			fail(http.StatusUnauthorized, "InvalidToken", "The access token is missing or invalid.")
			return
		}
		wire, err := io.ReadAll(r.Body)
		if err != nil {
			fail(http.StatusBadRequest, "InvalidRequest", err.Error())
			return
		}
		body := wire
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, _ := readers.Get().(*gzip.Reader)
			if zr == nil {
				zr, err = gzip.NewReader(bytes.NewReader(wire))
			} else {
				err = zr.Reset(bytes.NewReader(wire))
			}
			if err == nil {
				body, err = io.ReadAll(zr)
				readers.Put(zr)
			}
			if err != nil {
				fail(http.StatusBadRequest, "InvalidContentEncoding", err.Error())
				return
			}
		}
		body = bytes.TrimSpace(body)
		if len(body) < 2 || body[0] != '[' || body[len(body)-1] != ']' {
			fail(http.StatusBadRequest, "InvalidPayload", "The body is not a JSON array.")
			return
		}
		if len(body) > 1<<20 {
			fail(http.StatusRequestEntityTooLarge, "ContentLengthLimitExceeded", "The request body is over 1 MB.")
			return
		}
		n := int64(bytes.Count(body, rowKey))
		for _, c := range []*counts{total, get(r.PathValue("stream"))} {
			c.rows.Add(n)
			c.requests.Add(1)
			c.wire.Add(int64(len(wire)))
			c.raw.Add(int64(len(body)))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		c := total
		if s := r.URL.Query().Get("stream"); s != "" {
			c = get(s)
		}
		fmt.Fprintf(w, "%d %d %d %d\n", c.rows.Load(), c.requests.Load(), c.wire.Load(), c.raw.Load())
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
	mu.Lock()
	defer mu.Unlock()
	for s, c := range streams {
		fmt.Printf("dcr %s: rows=%d requests=%d wire=%d raw=%d\n", strings.TrimSpace(s), c.rows.Load(), c.requests.Load(), c.wire.Load(), c.raw.Load())
	}
}
