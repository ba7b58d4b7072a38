//go:build !race

package enrich_test

const raceEnabled = false
