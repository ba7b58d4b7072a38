package otlptest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (go-timecache's
// process-wide clock aside).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/agilira/go-timecache.(*TimeCache).updateLoop"))
}
