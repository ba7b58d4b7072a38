package input

import (
	"github.com/relaykit/relaykit/clock"
)

// clk is the relay's coarse clock, relaykit's process clock: receive times,
// batch stamps and the storage writers' rotation checks read it instead
// of calling time.Now per event. It ticks only while read.
var clk = clock.Default()
