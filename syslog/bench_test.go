package syslog_test

import (
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
)

// BenchmarkParser: one op is one message parsed into a reused event.
func BenchmarkParser(b *testing.B) {
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"format=rfc5424-sd-200B", sample5424},
		{"format=rfc3164", sample3164},
		{"format=iso-lenient", sampleISO},
		{"format=cef", sampleCEF},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := syslog.NewParser(syslog.Config{Location: time.UTC, RequireText: true, CEF: true})
			var ev relaykit.Event
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				ev.Reset()
				ev.ReceiveTime = 1763775541e9
				if p.Parse(&ev, c.in) == syslog.Unparsed {
					b.Fatal("unparsed")
				}
			}
		})
	}
}
