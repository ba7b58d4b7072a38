//go:build race

package input_test

const raceEnabled = true
