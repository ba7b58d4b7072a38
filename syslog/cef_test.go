package syslog_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cefHeader(version, vendor, product, dversion, class, name, sev string) map[string]string {
	return map[string]string{
		"cef.version": version, "cef.device_vendor": vendor, "cef.device_product": product, "cef.device_version": dversion,
		"cef.device_event_class_id": class, "cef.name": name, "cef.severity": sev,
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Expected fields per message. Sources: the ArcSight CEF implementation
// standard's examples (header and extension escapes, multi-line values),
// and vendor documentation samples (Palo Alto PAN-OS CEF, FortiGate CEF,
// Check Point Log Exporter CEF, Cisco ASA via a CEF connector).
func TestDecodeCEF(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"standard example", "CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232",
			with(cefHeader("0", "Security", "threatmanager", "1.0", "100", "worm successfully stopped", "10"), "src", "10.0.0.1", "dst", "2.1.2.2", "spt", "1232")},
		{"pipe in header and extension", `CEF:0|security|threatmanager|1.0|100|detected a \| in message|10|src=10.0.0.1 act=blocked a | dst=1.1.1.1`,
			with(cefHeader("0", "security", "threatmanager", "1.0", "100", "detected a | in message", "10"), "src", "10.0.0.1", "act", "blocked a |", "dst", "1.1.1.1")},
		{"backslash in header and extension", `CEF:0|security|threatmanager|1.0|100|detected a \\ in packet|10|src=10.0.0.1 act=blocked a \\ dst=1.1.1.1`,
			with(cefHeader("0", "security", "threatmanager", "1.0", "100", `detected a \ in packet`, "10"), "src", "10.0.0.1", "act", `blocked a \`, "dst", "1.1.1.1")},
		{"equal sign in extension", `CEF:0|security|threatmanager|1.0|100|detected a = in message|10|src=10.0.0.1 act=blocked a \= dst=1.1.1.1`,
			with(cefHeader("0", "security", "threatmanager", "1.0", "100", "detected a = in message", "10"), "src", "10.0.0.1", "act", "blocked a =", "dst", "1.1.1.1")},
		{"multi-line value", `CEF:0|ArcSight|ArcSight|6.0.3|agent:030|Agent [test] type [testalertng] started|Low|msg=Detected a threat.\n No action needed.\r cnt=1`,
			with(cefHeader("0", "ArcSight", "ArcSight", "6.0.3", "agent:030", "Agent [test] type [testalertng] started", "Low"), "msg", "Detected a threat.\n No action needed.\r", "cnt", "1")},
		{"empty extension", "CEF:1|V|P|1|id|name|5|", cefHeader("1", "V", "P", "1", "id", "name", "5")},
		{"palo alto", "CEF:0|Palo Alto Networks|PAN-OS|10.1.0|end|TRAFFIC|1|rt=Jan 05 2024 10:00:00 GMT deviceExternalId=012801096514 src=10.0.0.1 dst=8.8.8.8 sourceTranslatedAddress=0.0.0.0 cs1Label=Rule cs1=allow-out suser= duser= app=dns cs3Label=Virtual System cs3=vsys1 proto=udp act=allow",
			with(cefHeader("0", "Palo Alto Networks", "PAN-OS", "10.1.0", "end", "TRAFFIC", "1"),
				"rt", "Jan 05 2024 10:00:00 GMT", "deviceExternalId", "012801096514", "src", "10.0.0.1", "dst", "8.8.8.8", "sourceTranslatedAddress", "0.0.0.0",
				"cs1Label", "Rule", "cs1", "allow-out", "suser", "", "duser", "", "app", "dns", "cs3Label", "Virtual System", "cs3", "vsys1", "proto", "udp", "act", "allow")},
		{"fortigate", `CEF:0|Fortinet|Fortigate|v7.0.0|00013|traffic:forward accept|3|deviceExternalId=FGT60E0000000001 FTNTFGTlogid=0000000013 cat=traffic:forward FTNTFGTsubtype=forward src=10.0.0.1 spt=5000 dst=8.8.8.8 dpt=53 act=accept request=http://example.com/?a=1&b=2`,
			with(cefHeader("0", "Fortinet", "Fortigate", "v7.0.0", "00013", "traffic:forward accept", "3"),
				"deviceExternalId", "FGT60E0000000001", "FTNTFGTlogid", "0000000013", "cat", "traffic:forward", "FTNTFGTsubtype", "forward",
				"src", "10.0.0.1", "spt", "5000", "dst", "8.8.8.8", "dpt", "53", "act", "accept", "request", "http://example.com/?a=1&b=2")},
		{"check point", "CEF:0|Check Point|VPN-1 & FireWall-1|Check Point|Accept|http|Unknown|act=Accept destinationTranslatedAddress=0.0.0.0 src=10.0.0.1 dst=8.8.8.8 cs2Label=Rule Name cs2=Allow web",
			with(cefHeader("0", "Check Point", "VPN-1 & FireWall-1", "Check Point", "Accept", "http", "Unknown"),
				"act", "Accept", "destinationTranslatedAddress", "0.0.0.0", "src", "10.0.0.1", "dst", "8.8.8.8", "cs2Label", "Rule Name", "cs2", "Allow web")},
		{"cisco asa", "CEF:0|Cisco|ASA|9.8|106023|Deny|5|src=10.0.0.1 spt=5000 dst=10.0.0.2 dpt=22 proto=TCP act=Deny suser=alice cs1Label=acl cs1=outside_in",
			with(cefHeader("0", "Cisco", "ASA", "9.8", "106023", "Deny", "5"),
				"src", "10.0.0.1", "spt", "5000", "dst", "10.0.0.2", "dpt", "22", "proto", "TCP", "act", "Deny", "suser", "alice", "cs1Label", "acl", "cs1", "outside_in")},
		{"repeated key keeps the last", "CEF:0|V|P|1|id|n|5|src=1.1.1.1 src=2.2.2.2", with(cefHeader("0", "V", "P", "1", "id", "n", "5"), "src", "2.2.2.2")},
		{"text before the first key", "CEF:0|V|P|1|id|n|5|garbage words src=1.1.1.1", with(cefHeader("0", "V", "P", "1", "id", "n", "5"), "src", "1.1.1.1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev relaykit.Event
			ev.Raw = append(ev.Raw, tt.in...)
			require.NoError(t, syslog.DecodeCEF(&ev, ev.Raw))
			got := map[string]string{}
			for _, f := range ev.Fields {
				got[string(f.Key)] = string(f.Value)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.in, string(ev.Raw), "raw kept")
			assert.Equal(t, "cef", string(ev.SourceType))
		})
	}
}

func TestDecodeCEFErrors(t *testing.T) {
	var ev relaykit.Event
	ev.SetFieldString("keep", "1")
	assert.ErrorIs(t, syslog.DecodeCEF(&ev, []byte(`CEF:0|V|P|1|id|n \| x`)), syslog.ErrCEFHeader)
	assert.Len(t, ev.Fields, 1, "short header changes nothing")
	assert.Empty(t, ev.SourceType)
	assert.Error(t, syslog.DecodeCEF(&ev, []byte("LEEF:1.0|x")))
}

// The step decodes CEF messages, leaves others alone, keeps a sourcetype
// the user chose and replaces the syslog parser's default.
func TestParseCEFFunction(t *testing.T) {
	fn := syslog.ParseCEF()
	assert.Equal(t, "parse_cef", fn.Name())
	for _, tt := range []struct {
		raw, st, wantST string
		fields          int
		err             bool
	}{
		{raw: "CEF:0|V|P|1|id|n|5|src=1.2.3.4", wantST: "cef", fields: 8},
		{raw: "  CEF:0|V|P|1|id|n|5|src=1.2.3.4", st: "syslog", wantST: "cef", fields: 8},
		{raw: "CEF:0|V|P|1|id|n|5|src=1.2.3.4", st: "firewall", wantST: "firewall", fields: 8},
		{raw: "plain message", st: "syslog", wantST: "syslog"},
		{raw: "CEF:0|short", st: "syslog", wantST: "syslog", err: true},
	} {
		var ev relaykit.Event
		ev.Raw = append(ev.Raw, tt.raw...)
		ev.SourceType = append(ev.SourceType, tt.st...)
		keep, err := fn.Apply(&ev)
		assert.True(t, keep)
		assert.Equal(t, tt.err, err != nil, tt.raw)
		assert.Equal(t, tt.wantST, string(ev.SourceType), tt.raw)
		assert.Len(t, ev.Fields, tt.fields, tt.raw)
		assert.Equal(t, tt.raw, string(ev.Raw))
	}
}

// The syslog parser with CEF set decodes CEF after any syslog header.
func TestParserCEF(t *testing.T) {
	p := syslog.NewParser(syslog.Config{Location: time.UTC, CEF: true})
	for _, in := range []string{
		"<134>Jan  5 10:00:00 fw01 CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232",
		"<134>1 2024-01-05T10:00:00Z fw01 - - - - CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232",
		"<134>CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232",
	} {
		ev := relaykit.Event{ReceiveTime: ref.UnixNano()}
		p.Parse(&ev, []byte(in))
		assert.Equal(t, "cef", string(ev.SourceType), in)
		assert.True(t, bytes.HasPrefix(ev.Raw, []byte("CEF:0|Security")), in)
		v, _ := ev.Field("cef.name")
		assert.Equal(t, "worm successfully stopped", string(v), in)
		v, _ = ev.Field("spt")
		assert.Equal(t, "1232", string(v), in)
		assert.Equal(t, uint8(134), ev.Priority)
	}
	// Without CEF the message is plain syslog.
	p = syslog.NewParser(syslog.Config{Location: time.UTC})
	var ev relaykit.Event
	p.Parse(&ev, []byte("<134>CEF:0|V|P|1|id|n|5|src=1.2.3.4"))
	assert.Equal(t, "syslog", string(ev.SourceType))
	assert.Empty(t, ev.Fields)
}

// FuzzDecodeCEF: never panics, never touches Raw, field names are never
// empty and hold only key bytes or a cef.* header name.
func FuzzDecodeCEF(f *testing.F) {
	for _, s := range []string{
		"CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232",
		`CEF:0|security|threatmanager|1.0|100|detected a \| in message|10|src=10.0.0.1 act=blocked a | dst=1.1.1.1`,
		`CEF:0|a|b|c|d|e|f|k=\= \\ \n \r x=y=z ==  = a b=`, "CEF:", "CEF:|||||||", `CEF:0|\|\|\|\|\|\|\|`,
	} {
		f.Add([]byte(s))
	}
	var ev relaykit.Event
	f.Fuzz(func(t *testing.T, in []byte) {
		ev.Reset()
		ev.Raw = append(ev.Raw, in...)
		err := syslog.DecodeCEF(&ev, ev.Raw)
		if !bytes.Equal(ev.Raw, in) {
			t.Fatalf("raw changed: %q -> %q", in, ev.Raw)
		}
		if err != nil {
			if len(ev.Fields) != 0 {
				t.Fatalf("error %v but %d fields", err, len(ev.Fields))
			}
			return
		}
		for _, f := range ev.Fields {
			if len(f.Key) == 0 || bytes.ContainsAny(f.Key, " =\\|") {
				t.Fatalf("bad key %q from %q", f.Key, in)
			}
		}
	})
}
