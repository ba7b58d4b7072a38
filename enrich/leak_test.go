package enrich_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
