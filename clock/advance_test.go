package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The cached time does not go back for a time.Now that lost a race, and
// follows one that is a second or more behind it (the wall clock stepped
// back, or a synctest bubble's fake time).
func TestAdvance(t *testing.T) {
	c := New(time.Millisecond)
	ahead := time.Now().UnixNano() + int64(10*time.Millisecond)
	c.now.Store(ahead) // a tick stored just now by a goroutine that read a later time
	c.Nano()
	assert.Equal(t, ahead, c.now.Load(), "a time 10 ms behind is not stored")

	future := time.Now().UnixNano() + int64(time.Hour)
	c.now.Store(future) // the wall clock was stepped back an hour since
	n := c.Nano()
	assert.Less(t, n, future)
	assert.Equal(t, n, c.now.Load(), "a time an hour behind is followed")
}
