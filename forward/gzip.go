package forward

import (
	"fmt"

	"github.com/relaykit/relaykit/internal/gzipool"
)

// Compression levels below 1 that [HTTPConfig].GzipLevel and [AppendGzip]
// accept beside 1 (fastest) to 9 (smallest). See the package
// documentation's "Compression" section for what each costs and saves.
const (
	// GzipHuffmanOnly compresses with Huffman coding alone: no search for
	// repeated strings. On syslog-like text it costs half the CPU of
	// level 1 and shrinks rows 1.5× where level 1 shrinks them 3.7×; on
	// CEF it costs as much as level 1 (measured in the package
	// documentation's "Compression" section).
	GzipHuffmanOnly = gzipool.HuffmanOnly // -2
	// GzipStateless is klauspost/compress's stateless level: level-1
	// matching within each block without keeping state between writes.
	// With whole request bodies compressed at once it saves nothing over
	// level 1; it is here for the comparison.
	GzipStateless = gzipool.Stateless // -3
)

// validGzipLevel reports whether level is 1..9, GzipHuffmanOnly or
// GzipStateless.
func validGzipLevel(level int) bool { return gzipool.Valid(level) }

// AppendGzip appends the gzip (RFC 1952) compression of src at level (1
// fastest to 9 smallest, [GzipHuffmanOnly] or [GzipStateless]) to dst and
// returns the extended slice. It uses a pooled
// github.com/klauspost/compress writer that is Reset for each call and
// Closed before it returns to the pool (a bounded free list that survives
// garbage collections, shared with the otlp exporter), so it allocates
// nothing once warm beyond growing dst. It is safe for concurrent use.
func AppendGzip(dst, src []byte, level int) ([]byte, error) {
	if !validGzipLevel(level) {
		return dst, fmt.Errorf("forward: gzip level %d is not 1..9, GzipHuffmanOnly (-2) or GzipStateless (-3)", level)
	}
	return gzipool.Append(dst, src, level)
}
