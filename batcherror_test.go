package relaykit_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

func TestBatchError(t *testing.T) {
	cause := errors.New("HTTP 400")
	be := &relaykit.BatchError{Failed: []relaykit.FailedRange{
		{From: 2, To: 3, Permanent: true, Reason: "rejected", Err: cause},
		{From: 5, To: 9, Reason: "retries_exhausted", Err: io.ErrUnexpectedEOF},
	}}
	assert.Equal(t, 5, be.Events())
	assert.False(t, be.Permanent())
	assert.Equal(t, "relaykit: 5 events undelivered (rejected: HTTP 400) and 1 more runs", be.Error())
	assert.ErrorIs(t, be, cause)
	assert.ErrorIs(t, be, io.ErrUnexpectedEOF)

	wrapped := errors.Join(errors.New("context"), be)
	assert.Same(t, be, relaykit.AsBatchError(wrapped, 10))
	be.Failed = be.Failed[:1]
	assert.True(t, be.Permanent())
}

func TestAsBatchError(t *testing.T) {
	assert.Nil(t, relaykit.AsBatchError(nil, 3))
	be := relaykit.AsBatchError(io.EOF, 3)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, relaykit.FailedRange{From: 0, To: 3, Reason: relaykit.ReasonSinkError, Err: io.EOF}, be.Failed[0])
	assert.False(t, be.Permanent())
	assert.Empty(t, relaykit.AsBatchError(io.EOF, 0).Failed)
}
