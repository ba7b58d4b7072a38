package tap_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: a stream whose
// client went away must end its handler.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
