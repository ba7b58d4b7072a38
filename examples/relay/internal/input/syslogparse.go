package input

import (
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
)

// syslogParser turns one syslog frame into a relaykit.Event with
// syslog.Parser: RFC 5424 with structured data, RFC 3164 and the
// variants rsyslog and syslog-ng accept, a lenient path for the rest, and
// CEF after any of them. A frame it cannot read (malformed PRI, invalid
// UTF-8, control bytes) becomes a raw event with [relaykit.FlagParseError]:
// it is forwarded, never dropped.
//
// A syslogParser must not be used from concurrent goroutines; use one per
// connection or listener.
type syslogParser struct {
	Parser *syslog.Parser
}

func NewSyslogParser(loc *time.Location) *syslogParser {
	return &syslogParser{Parser: syslog.NewParser(syslogConfig(loc))}
}

// Parse fills ev (which it resets first) from frame. peer is used as the
// host when the message carries none. ev's buffers are reused.
func (sp *syslogParser) Parse(ev *relaykit.Event, frame []byte, peer string) syslog.Format {
	ev.Reset()
	// The receive time is the reference for timestamps without a year;
	// PushOwned keeps it, TryPushOwned (UDP) stamps it again.
	ev.ReceiveTime = clk.Nano()
	res := sp.Parser.Parse(ev, frame)
	if len(ev.Host) == 0 {
		ev.Host = append(ev.Host, peer...)
		ev.Flags |= relaykit.FlagHostFromPeer
	}
	return res
}
