package kafka_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (go-timecache's
// process-wide clock, started when the engine of the examples is
// imported, excepted).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/agilira/go-timecache.(*TimeCache).updateLoop"))
}
