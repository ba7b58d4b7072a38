// Package cfgerr builds the [relaykit.FieldError] values that every
// relaykit constructor returns for a bad Config field.
package cfgerr

import (
	"fmt"

	"github.com/relaykit/relaykit"
)

// New returns a *relaykit.FieldError for field, wrapping invalid (the
// package's ErrInvalidConfig), with the reason formatted from format and
// args.
func New(invalid error, field, format string, args ...any) error {
	return &relaykit.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: invalid}
}
