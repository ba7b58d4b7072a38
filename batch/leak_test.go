package batch_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind. The go-timecache
// package starts its default cache's updater in its init; it is not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/agilira/go-timecache.(*TimeCache).updateLoop"),
	)
}
