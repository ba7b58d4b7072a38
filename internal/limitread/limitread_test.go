package limitread_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/limitread"
)

func TestAppend(t *testing.T) {
	b, err := limitread.Append(nil, strings.NewReader("hello"), 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))

	b, err = limitread.Append(b[:0], strings.NewReader("hello!"), 5)
	require.ErrorIs(t, err, limitread.ErrTooLarge)
	assert.Len(t, b, 6, "limit+1 bytes read")

	big := bytes.Repeat([]byte("x"), 100<<10)
	b, err = limitread.Append(nil, bytes.NewReader(big), int64(len(big)))
	require.NoError(t, err)
	assert.Equal(t, big, b)

	broken := errors.New("broken")
	_, err = limitread.Append(nil, io.MultiReader(strings.NewReader("ab"), errReader{broken}), 10)
	require.ErrorIs(t, err, broken)

	buf := make([]byte, 0, 64<<10)
	rd := bytes.NewReader(nil)
	allocs := testing.AllocsPerRun(100, func() {
		rd.Reset(big[:32<<10])
		buf, _ = limitread.Append(buf[:0], rd, 64<<10)
	})
	assert.Zero(t, allocs, "a reused buffer large enough")
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
