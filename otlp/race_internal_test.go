//go:build race

package otlp

const raceOn = true
