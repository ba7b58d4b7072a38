package forward_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// A syslog sink for a TLS receiver (RFC 5425) with a private CA, and the
// RFC 5424 message it sends for an event. Send connects on first use.
func ExampleSyslog() {
	sink, err := forward.NewSyslog(forward.SyslogConfig{
		Network: "tls",
		Address: "logs.example.com:6514",
		// TLS nil: the system roots; for a private CA,
		// TLS: forward.TLSConfig{CAFile: "/etc/relay/ca.pem"}.Build().
		ProcIDField:    "pid",
		StructuredData: []string{"user"},
	})
	if err != nil {
		panic(err)
	}
	defer sink.Close()

	var e relaykit.Event
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC).UnixNano()
	e.Host = []byte("web1")
	e.Source = []byte("sshd")
	e.SetPriority(4, 6) // auth.info
	e.SetFieldString("pid", "812")
	e.SetFieldString("user", `alice "admin"`)
	e.Raw = []byte("Accepted publickey for alice")
	fmt.Println(string(sink.AppendMessage(nil, &e)))
	// Output:
	// <38>1 2026-01-02T03:04:05.600000Z web1 sshd 812 - [relaykit@32473 user="alice \"admin\""] Accepted publickey for alice
}
