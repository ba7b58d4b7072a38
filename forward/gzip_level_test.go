package forward_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward"
)

// Every accepted level produces gzip that the standard library reads back
// to the input; Huffman-only output is larger than level 1's on text with
// repeats (it finds no matches); other levels are refused, by AppendGzip
// and by the sinks' configuration.
func TestGzipLevels(t *testing.T) {
	var src []byte
	for i := range 2000 {
		src = fmt.Appendf(src, `{"TimeGenerated":"2026-11-22T01:02:03.%07dZ","Computer":"web-%d","SyslogMessage":"GET /api/v1/items?id=%d 200"},`, i, i%7, i*31)
	}
	size := map[int]int{}
	for _, level := range []int{forward.GzipStateless, forward.GzipHuffmanOnly, 1, 2, 3, 4, 5, 6, 7, 8, 9} {
		out, err := forward.AppendGzip([]byte("keep:"), src, level)
		require.NoError(t, err, "level %d", level)
		require.Equal(t, "keep:", string(out[:5]))
		zr, err := gzip.NewReader(bytes.NewReader(out[5:]))
		require.NoError(t, err, "level %d", level)
		got, err := io.ReadAll(zr)
		require.NoError(t, err, "level %d", level)
		require.Equal(t, src, got, "level %d", level)
		size[level] = len(out) - 5
	}
	assert.Greater(t, size[forward.GzipHuffmanOnly], 2*size[1], "Huffman only finds no repeats")
	assert.Less(t, size[9], size[1])

	for _, level := range []int{-4, -1, 0, 10} {
		_, err := forward.AppendGzip(nil, src, level)
		assert.Error(t, err, "level %d", level)
	}
	for _, level := range []int{forward.GzipHuffmanOnly, forward.GzipStateless, 0, 9} {
		s, err := forward.NewHEC(forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{GzipLevel: level}})
		require.NoError(t, err, "level %d", level)
		require.NoError(t, s.Close())
	}
	for _, level := range []int{-4, -1, 10} {
		_, err := forward.NewHEC(forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{GzipLevel: level}})
		require.ErrorIs(t, err, forward.ErrInvalidConfig, "level %d", level)
	}
}
