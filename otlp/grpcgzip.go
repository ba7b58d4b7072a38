package otlp

import (
	"io"
	"sync"

	"github.com/relaykit/relaykit/internal/gzipool"
)

// grpcGzip compresses an exporter's gRPC requests with the pooled
// klauspost writers of its HTTP requests, at its GzipLevel, instead of
// grpc-go's registered "gzip" compressor (compress/gzip at level 6):
// that one took a quarter of the exporter's CPU in a profile of
// 100-record requests. It is set per connection (grpc.WithCompressor), so
// the process-wide "gzip" registration is left alone. The wire format is
// the same: grpc-encoding gzip.
type grpcGzip struct {
	level int
	bufs  sync.Pool // *[]byte
}

// Do writes the gzip compression of p to w. A message that is gzip
// already (a request body EncodeRequests stored: it starts with the gzip
// magic 1f 8b, which no ExportLogsServiceRequest does, its first byte
// being a field tag, 0x0a) is written as it is.
func (g *grpcGzip) Do(w io.Writer, p []byte) error {
	if len(p) >= 2 && p[0] == 0x1f && p[1] == 0x8b {
		_, err := w.Write(p)
		return err
	}
	bp, _ := g.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	z, err := gzipool.Append((*bp)[:0], p, g.level)
	if err == nil {
		_, err = w.Write(z)
	}
	if cap(z) <= maxPooledBytes {
		*bp = z[:0]
		g.bufs.Put(bp)
	}
	return err
}

// Type returns "gzip", the grpc-encoding of the requests.
func (g *grpcGzip) Type() string { return "gzip" }
