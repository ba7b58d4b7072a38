//go:build !race

package hec_test

const raceEnabled = false
