//go:build race

package forward_test

const raceEnabled = true
