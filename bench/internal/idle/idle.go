// Package idle measures the CPU a process uses while it does nothing, for
// the idle-CPU programs of cmd/idlecpu.
package idle

import (
	"fmt"
	"syscall"
	"time"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Measure sleeps 200 ms (start-up settles), then window, and prints the
// process CPU used over the window as "idle-cpu: <ns> ns <percent> %".
func Measure(window time.Duration) {
	time.Sleep(200 * time.Millisecond)
	before := processCPU()
	time.Sleep(window)
	used := processCPU() - before
	fmt.Printf("idle-cpu: %d ns %.4f %%\n", used.Nanoseconds(), 100*used.Seconds()/window.Seconds())
}
