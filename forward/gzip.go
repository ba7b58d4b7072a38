package forward

import (
	"fmt"

	"github.com/relaykit/relaykit/internal/gzipool"
)

// AppendGzip appends the gzip (RFC 1952) compression of src at level (1
// fastest to 9 smallest) to dst and returns the extended slice. It uses a
// pooled github.com/klauspost/compress writer that is Reset for each call
// and Closed before it returns to the pool (a bounded free list that
// survives garbage collections, shared with the otlp exporter), so it
// allocates nothing once warm beyond growing dst. It is safe for
// concurrent use.
func AppendGzip(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level > 9 {
		return dst, fmt.Errorf("forward: gzip level %d is outside 1..9", level)
	}
	return gzipool.Append(dst, src, level)
}
