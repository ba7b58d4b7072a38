package dest

import (
	"fmt"
	"strconv"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"go.yaml.in/yaml/v3"

	"github.com/relaykit/relaykit/forward"
)

// CompressionLevel is the gzip level of an hec or sentinel destination's
// request bodies (compression_level): 1 (fastest) to 9 (smallest),
// huffman_only or stateless (forward.GzipHuffmanOnly, forward.GzipStateless).
// Zero (left out) means forward's default, 1. README.md ("Compression
// level") has the measured CPU and bytes of each.
type CompressionLevel int

// compressionNames are the levels below 1, by name.
var compressionNames = map[string]CompressionLevel{
	"huffman_only": forward.GzipHuffmanOnly,
	"stateless":    forward.GzipStateless,
}

// UnmarshalYAML parses 1..9, huffman_only or stateless.
func (c *CompressionLevel) UnmarshalYAML(n *yaml.Node) error {
	if v, ok := compressionNames[n.Value]; ok {
		*c = v
		return nil
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < 1 || v > 9 {
		return fmt.Errorf("invalid compression_level %q (want 1 to 9, huffman_only or stateless)", n.Value)
	}
	*c = CompressionLevel(v)
	return nil
}

// validate checks the settings together: a level needs gzip.
func (h *HTTPSettings) Validate(f string, ck *config.Checker) {
	if h.CompressionLevel != 0 && h.Gzip != nil && !*h.Gzip {
		ck.Bad(f+".compression_level", "is set, but gzip: false sends bodies uncompressed")
	}
}
