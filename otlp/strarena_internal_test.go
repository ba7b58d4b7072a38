package otlp

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStrArena: strings taken from an arena keep their contents while
// the arena moves on to new chunks and the source bytes change, for
// small, empty and large (copied alone) inputs.
func TestStrArena(t *testing.T) {
	var a strArena
	src := make([]byte, 0, arenaChunk)
	var got, want []string
	for i := range 5000 {
		src = append(src[:0], "value-"...)
		src = strconv.AppendInt(src, int64(i), 10)
		switch i % 100 {
		case 7:
			src = src[:0]
		case 13:
			src = append(src, bytes.Repeat([]byte{'x'}, arenaChunk/4)...)
		}
		want = append(want, string(src))
		got = append(got, a.str(src))
		clear(src) // the caller's bytes change; the string must not
	}
	require.Equal(t, want, got)
	var nilArena *strArena
	require.Equal(t, "abc", nilArena.str([]byte("abc")))
}
