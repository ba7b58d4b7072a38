package relaykit

import "strings"

// FieldError reports a bad field of a Config: every relaykit constructor
// (and every Config's Validate method) returns one, wrapped or not, for a
// setting it refuses, so that a program that builds Configs from its own
// file format can say where the bad value came from:
//
//	var fe *relaykit.FieldError
//	if errors.As(err, &fe) {
//		// fe.Field is "BatchSize"; the file's key was inputs.syslog_udp[0].batch_size
//	}
//
// errors.Is(err, pkg.ErrInvalidConfig) holds for it too: Err is the
// package's ErrInvalidConfig.
type FieldError struct {
	// Field is the path of the field in the Config given to the
	// constructor, in Go syntax: "MaxConns", "HTTP.Timeout",
	// "Tokens[1].Token". Empty when the error is about the Config as a
	// whole (two fields that contradict each other name the second).
	Field string
	// Reason says what is wrong with the value: "must not be negative",
	// "2000 out of range 1..1024". It never contains a secret.
	Reason string
	// Err is the package's ErrInvalidConfig (stream.ErrInvalidConfig,
	// udp.ErrInvalidConfig, ...), which Unwrap returns.
	Err error
}

// Error returns "pkg: invalid config: Field: reason".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Err != nil {
		b.WriteString(e.Err.Error())
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldIn returns err with its path prefixed by parent when err is a
// *FieldError, for a constructor that validates a Config nested in its own
// (forward.HECConfig.HTTP: "HTTP" + "." + "Timeout"); an index parent
// ("Tokens[1]") works the same way. err must be the *FieldError itself, as
// the nested Config's validation returned it: a wrapper's message was
// fixed when it was made. Other errors are returned as they are.
func FieldIn(parent string, err error) error {
	fe, ok := err.(*FieldError)
	if !ok || parent == "" {
		return err
	}
	c := *fe
	if c.Field == "" {
		c.Field = parent
	} else {
		c.Field = parent + "." + c.Field
	}
	return &c
}
