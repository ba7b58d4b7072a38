package kafka

import (
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/eventjson"
)

// DecodeJSON fills e from a record value written with [EncodingJSON]
// ([AppendJSON]): the decoder the [Consumer] uses, for programs that read
// such records by other means. It resets e first and reuses its buffers
// and p's, so it does not allocate once both are warm; p must not be used
// by two goroutines at once, and e does not point into value or p.
//
// It restores every member AppendJSON writes. What does not cross the
// hop: ReceiveTime when the event has a Time; Priority and
// FlagPriorityAssumed without FlagPriority; FlagParseError and
// FlagTruncated; and bytes of host, source, sourcetype, index and fields
// that are not valid UTF-8 (each comes back as U+FFFD; the message keeps
// its bytes through message_base64). It returns an error for a value that
// is not such an object (see the package documentation, "Consumer").
func DecodeJSON(p *fastjson.Parser, value []byte, e *relaykit.Event) error {
	return eventjson.Decode(p, value, e)
}
