package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Timeouts of the metrics and health server.
const (
	metricsReadHeaderTimeout = 5 * time.Second  // request line and headers
	metricsReadTimeout       = 5 * time.Second  // the whole request, body included
	metricsWriteTimeout      = 10 * time.Second // the response, from the end of the request headers
	metricsIdleTimeout       = 60 * time.Second // a kept-alive connection between requests
)

// metricsServer serves /metrics and /healthz. Extra collectors (router,
// sinks) register on the same registry.
type Server struct {
	reg      *prometheus.Registry
	HTTP     *http.Server
	Listener net.Listener
}

// NewServer builds the server of /metrics (the collectors') and /healthz
// (ready's answer) on addr (none when addr is empty); api holds further
// handlers by path (GET /api/sources when sources are tracked).
func NewServer(addr string, ready func() error, api map[string]http.Handler, collectors ...prometheus.Collector) (*Server, error) {
	reg := prometheus.NewRegistry()
	for _, c := range collectors {
		reg.MustRegister(c)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	for path, h := range api {
		mux.Handle(path, h)
	}
	ms := &Server{reg: reg}
	if addr == "" {
		return ms, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen: %w", err)
	}
	ms.Listener = ln
	ms.HTTP = &http.Server{
		Handler: mux,
		// Bounds for a server on a network (net/http's Server docs): a
		// client that trickles a request, never reads the response or
		// idles on a kept-alive connection holds a connection and a
		// goroutine for at most these. A scrape takes milliseconds;
		// Prometheus gives up after 10 s by default.
		ReadHeaderTimeout: metricsReadHeaderTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
	}
	return ms, nil
}

// Addr is the bound address, or "" when metrics are off.
func (m *Server) Addr() string {
	if m.Listener == nil {
		return ""
	}
	return m.Listener.Addr().String()
}

// Run serves until ctx ends.
func (m *Server) Run(ctx context.Context) error {
	if m.HTTP == nil {
		<-ctx.Done()
		return nil
	}
	errc := make(chan error, 1)
	go func() { errc <- m.HTTP.Serve(m.Listener) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = m.HTTP.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
