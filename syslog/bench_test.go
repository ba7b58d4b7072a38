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
		{"format=cef-1200B", sampleCEF1200},
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

// sampleCEF1200 is a 1.2 KB RFC 5424 message carrying a firewall's CEF
// traffic record with 45 extension keys (bench/internal/reallines).
var sampleCEF1200 = []byte(`<134>1 2026-11-22T01:00:00.719159Z fw-edge-01 PAN-OS - - - CEF:0|Palo Alto Networks|PAN-OS|10.2.4|TRAFFIC|end|3|rt=Nov 22 2026 01:09:11 GMT deviceExternalId=0333333333 src=10.23.227.247 dst=69.235.78.199 sourceTranslatedAddress=203.0.113.7 destinationTranslatedAddress=30.230.36.13 cs1Label=Rule cs1=allow-scheduler suser=corp\\www-data duser= cs2Label=Application cs2=smb cs3Label=Virtual System cs3=vsys1 cs4Label=Source Zone cs4=trust cs5Label=Destination Zone cs5=untrust deviceInboundInterface=ethernet1/2 deviceOutboundInterface=ethernet1/1 cs6Label=LogProfile cs6=forward-to-siem cn1Label=SessionID cn1=1056234 cnt=1 spt=13502 dpt=3389 flexString1Label=Flags flexString1=0xccd92 proto=UDP act=allow flexNumber1Label=Total bytes flexNumber1=663547 in=104296 out=354391 cn2Label=Packets cn2=328 PanOSPacketsReceived=1067 PanOSPacketsSent=692 start=1795575108079 cn3Label=Elapsed time in seconds cn3=213 cs2Label=URL Category cs2=web-based-email externalId=746930714951 reason=tcp-fin request=https://gateway.example.org/graphql?q=88cd849fd6b6446cfe17 requestClientApplication=Go-http-client/2.0 requestMethod=GET fileHash=a44b5dad6121fd6fbea1641def9e302049f4b52e671f4ef1609ab619f1c8ef45 msg=insufficient by for`)
