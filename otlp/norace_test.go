//go:build !race

package otlp_test

const raceEnabled = false
