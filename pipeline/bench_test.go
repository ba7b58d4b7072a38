package pipeline_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// BenchmarkFilterMatch compares a Filter with the bare regexp on a
// 200-byte line that does not match, per pattern.
func BenchmarkFilterMatch(b *testing.B) {
	line := []byte(`<38>Nov 22 02:11:09 host-12 sshd[2211]: Accepted publickey for deploy from 198.51.100.4 port 40022 ssh2: RSA SHA256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 k1=v2 k3=v4`)
	for _, p := range []string{
		`sshd\[\d+\]: Failed password for`,
		`\b(?:DENY|DROP)\b`,
		`HTTP/1\.[01]" 5\d\d `,
		`(?i)error|fatal|panic`,
	} {
		f, err := pipeline.CompileFilter(p)
		if err != nil {
			b.Fatal(err)
		}
		re := regexp.MustCompile(p)
		b.Run("pattern="+p+"/impl=filter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f.Match(line) {
					b.Fatal("match")
				}
			}
		})
		b.Run("pattern="+p+"/impl=regexp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if re.Match(line) {
					b.Fatal("match")
				}
			}
		})
	}
}

// BenchmarkSyslogParser: one op is one message parsed into a reused event.
func BenchmarkSyslogParser(b *testing.B) {
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
			p := pipeline.NewSyslogParser(pipeline.SyslogConfig{Location: time.UTC, RequireText: true, CEF: true})
			var ev relaykit.Event
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				ev.Reset()
				ev.ReceiveTime = 1763775541e9
				if p.Parse(&ev, c.in) == pipeline.SyslogUnparsed {
					b.Fatal("unparsed")
				}
			}
		})
	}
}
