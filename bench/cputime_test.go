package bench

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock measures the CPU time the benchmark process uses (all threads,
// GC included), which unlike wall time does not grow when other processes
// compete for the cores. Reporting it per op next to ns/op keeps
// comparisons honest on a shared machine.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{start: processCPU()} }

// report adds the metric cpu-ns/op; call it after the b.Loop loop.
func (c cpuClock) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
	}
}
