//go:build race

package forward_test

// raceEnabled: sync.Pool drops items at random under the race detector,
// so pooled zero-allocation checks are skipped.
const raceEnabled = true
