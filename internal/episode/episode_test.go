package episode_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/relaykit/relaykit/internal/episode"
)

func TestEpisode(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var e episode.Log
	assert.False(t, e.OK(log, "fine"), "no episode: nothing to end")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				e.Fail(log, "failing", "dest", "x")
			}
		})
	}
	wg.Wait()
	assert.True(t, e.Failing())
	assert.True(t, e.OK(log, "recovered", "dest", "x"))
	assert.False(t, e.OK(log, "recovered"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if assert.Len(t, lines, 2) {
		assert.Contains(t, lines[0], `level=WARN msg=failing dest=x`)
		assert.Contains(t, lines[1], `level=INFO msg=recovered dest=x failures=1000`)
	}
}
