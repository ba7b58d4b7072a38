package testtool

import "testing"

// MinAllocsPerRun returns the least of tries measurements of
// testing.AllocsPerRun(runs, f). A garbage collection during a
// measurement empties the sync.Pools f draws from, and the refills count
// as allocations of that measurement; on a busy machine, or beside other
// tests of the package, that happens now and then. The least of a few
// measurements is the steady state, and an allocation f makes on every
// call (per event, per batch) still shows in each of them.
func MinAllocsPerRun(tries, runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range tries - 1 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}
