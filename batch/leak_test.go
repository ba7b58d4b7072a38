package batch_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind, the clock's
// ticker included: it ends 100 ticks after its last read.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
