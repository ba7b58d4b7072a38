package enrich

import "errors"

// ErrInvalidConfig is wrapped by every error a constructor returns for a
// bad configuration.
var ErrInvalidConfig = errors.New("enrich: invalid config")

// ErrClosed is returned by enrichers and lookups used after Close.
var ErrClosed = errors.New("enrich: closed")
