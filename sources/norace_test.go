//go:build !race

package sources_test

const raceEnabled = false
