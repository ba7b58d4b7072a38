package storage_test

import (
	"testing"

	"go.uber.org/goleak"
)

// ignoreTimecache ignores the process-wide clock goroutine that
// github.com/agilira/go-timecache starts when it is imported.
var ignoreTimecache = goleak.IgnoreTopFunction("github.com/agilira/go-timecache.(*TimeCache).updateLoop")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, ignoreTimecache)
}
