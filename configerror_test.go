package relaykit_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

func TestFieldError(t *testing.T) {
	invalid := errors.New("pkg: invalid config")
	var err error = &relaykit.FieldError{Field: "Timeout", Reason: "must not be negative", Err: invalid}
	assert.EqualError(t, err, "pkg: invalid config: Timeout: must not be negative")
	assert.ErrorIs(t, err, invalid)

	// A constructor that validates a nested Config prefixes the path.
	nested := relaykit.FieldIn("HTTP", err)
	var fe *relaykit.FieldError
	require.ErrorAs(t, nested, &fe)
	assert.Equal(t, "HTTP.Timeout", fe.Field)
	assert.EqualError(t, nested, "pkg: invalid config: HTTP.Timeout: must not be negative")
	assert.EqualError(t, err, "pkg: invalid config: Timeout: must not be negative", "the nested error is left as it was")
	wrapped := fmt.Errorf("hec: %w", err)
	assert.Same(t, wrapped, relaykit.FieldIn("HTTP", wrapped), "a wrapper is left alone")
	require.ErrorAs(t, relaykit.FieldIn("Tokens[1]", &relaykit.FieldError{Reason: "bad", Err: invalid}), &fe)
	assert.Equal(t, "Tokens[1]", fe.Field)

	plain := errors.New("no field")
	assert.Same(t, plain, relaykit.FieldIn("HTTP", plain))
	assert.NoError(t, relaykit.FieldIn("HTTP", nil))
}
