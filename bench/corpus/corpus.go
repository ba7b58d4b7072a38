// Package corpus generates deterministic syslog corpora for the
// reduction and Sentinel benchmarks: the same seed gives the same lines,
// byte for byte, on every machine and Go version (math/rand/v2's PCG and
// Zipf, no map iteration, no clock).
//
// Three corpora, each a stream of syslog lines (without the trailing
// newline) with simulated timestamps that advance at [Config.Rate] events
// per second from [Config.Start]:
//
//   - [Firewall]: a perimeter firewall's allow and deny flows as CEF over
//     RFC 5424, with the skew of real traffic: Zipf over internal sources,
//     external destinations and scanners; ports from a weighted list.
//   - [Daemons]: chatty Linux daemons (sshd, systemd, CRON, kernel,
//     dhcpd, ...) on a fleet of hosts, half of them RFC 3164 and half RFC
//     5424, each message repeated in a burst of geometric length, the
//     pattern rsyslog's "last message repeated N times" exists for.
//   - [CEFVendors]: CEF from four products with their own extension
//     keys: Palo Alto Networks PAN-OS (TRAFFIC and THREAT), Fortinet
//     FortiGate (traffic and UTM), Check Point (Accept and Drop) and
//     Zscaler NSS (web).
//
// A Generator is not safe for concurrent use.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Kind selects a corpus.
type Kind int

const (
	// Firewall is a perimeter firewall's flows. Per line: one of 4
	// firewalls (Zipf, s=1.5), action accept (82 %) or deny (18 %).
	// Accepted flows: an internal source of 4,096 (10.x.y.z, Zipf s=1.2)
	// to an external destination of 2,048 (Zipf s=1.1) on a port from a
	// weighted list (443: 55 %, 80: 15 %, 53: 12 %, ...), a random
	// ephemeral source port, out and in bytes log-uniform between 64 B
	// and 1 MB. Denies: one of 256 scanners (Zipf s=1.3) to one of 64
	// internal servers on 22, 23, 445, 3389 or 1433. Format:
	//
	//	<134>1 2026-11-27T10:00:00.000500Z fw01 NGFW - - - CEF:0|Acme|NGFW|9.1|traffic|accept|3|src=10.0.3.7 spt=51234 dst=93.184.3.9 dpt=443 proto=TCP act=accept out=1234 in=5678 deviceInboundInterface=eth1 cs1Label=Rule cs1=allow-web
	Firewall Kind = iota
	// Daemons is syslog from 200 Linux hosts (Zipf s=1.1): a message
	// from a weighted set of templates (sshd failed and accepted logins
	// and preauth disconnects, systemd sessions and units, CRON, kernel
	// UFW blocks and link flaps, dhcpd, postfix), then repeated on the
	// same host, byte for byte in its MSG, a geometric number of times
	// (mean 12; a daemon stuck in a loop). Even-numbered hosts write RFC
	// 5424, odd ones RFC 3164:
	//
	//	<86>1 2026-11-27T10:00:00.000500Z srv042 sshd 4242 - - Failed password for invalid user admin from 203.0.113.9 port 40022 ssh2
	//	<86>Nov 27 10:00:00 srv043 sshd[4243]: Failed password for invalid user admin from 203.0.113.9 port 40022 ssh2
	Daemons
	// CEFVendors is CEF over RFC 5424 from 12 devices of four products,
	// with each product's header and extension keys: PAN-OS TRAFFIC end
	// (40 %) and THREAT (8 %), FortiGate traffic (30 %) and UTM virus or
	// IPS (4 %), Check Point Accept and Drop (12 %), Zscaler NSS web (6
	// %). Addresses and ports are Zipf-skewed as in Firewall.
	CEFVendors
)

// String returns "firewall", "daemons" or "cef-vendors".
func (k Kind) String() string {
	switch k {
	case Firewall:
		return "firewall"
	case Daemons:
		return "daemons"
	case CEFVendors:
		return "cef-vendors"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Kinds lists every corpus.
var Kinds = []Kind{Firewall, Daemons, CEFVendors}

// Config configures a Generator. The zero value is usable.
type Config struct {
	// Seed seeds the generator. Zero is a seed like any other.
	Seed uint64
	// Start is the first line's time. Zero means 2026-11-27T10:00:00Z.
	Start time.Time
	// Rate is the simulated events per second: line i has time Start +
	// i/Rate. Zero means 2,000 (a busy site's firewall).
	Rate int
}

// Generator writes the lines of one corpus.
type Generator struct {
	kind  Kind
	r     *rand.Rand
	start int64
	step  int64 // ns between lines
	n     int64 // lines written

	host, src, dst, scanner, server, dev *rand.Zipf
	// Daemons: the current burst.
	burst     []byte // the MSG being repeated
	burstHost int
	burstProc string
	burstPID  int
	burstPri  int
	left      int
}

// New returns a Generator for kind.
func New(kind Kind, cfg Config) *Generator {
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 2000
	}
	r := rand.New(rand.NewPCG(cfg.Seed, uint64(kind)+0x9e3779b97f4a7c15))
	g := &Generator{kind: kind, r: r, start: cfg.Start.UnixNano(), step: int64(time.Second) / int64(cfg.Rate)}
	g.src = rand.NewZipf(r, 1.2, 1, 4095)
	g.dst = rand.NewZipf(r, 1.1, 1, 2047)
	g.scanner = rand.NewZipf(r, 1.3, 1, 255)
	g.server = rand.NewZipf(r, 1.2, 1, 63)
	switch kind {
	case Firewall:
		g.host = rand.NewZipf(r, 1.5, 1, 3)
	case Daemons:
		g.host = rand.NewZipf(r, 1.1, 1, 199)
	default:
		g.dev = rand.NewZipf(r, 1.2, 1, 11)
	}
	return g
}

// Next appends the next line to dst and returns it with the line's time
// (Unix nanoseconds).
func (g *Generator) Next(dst []byte) ([]byte, int64) {
	ns := g.start + g.n*g.step
	g.n++
	switch g.kind {
	case Firewall:
		return g.firewall(dst, ns), ns
	case Daemons:
		return g.daemon(dst, ns), ns
	default:
		return g.vendor(dst, ns), ns
	}
}

// weighted picks an index by weights (percent, summing to 100).
func (g *Generator) weighted(w []int) int {
	x := g.r.IntN(100)
	for i, p := range w {
		if x < p {
			return i
		}
		x -= p
	}
	return len(w) - 1
}

var (
	allowPorts  = []int{443, 80, 53, 123, 8443, 25, 993, 22, 3389, 5223}
	allowWeight = []int{55, 15, 12, 5, 4, 3, 2, 2, 1, 1}
	denyPorts   = []int{22, 23, 445, 3389, 1433}
	denyWeight  = []int{35, 20, 20, 15, 10}
)

func appendRFC5424Head(dst []byte, pri int, ns int64, host, app string, procid int) []byte {
	dst = append(dst, '<')
	dst = strconv.AppendInt(dst, int64(pri), 10)
	dst = append(dst, ">1 "...)
	dst = time.Unix(0, ns).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
	dst = append(dst, ' ')
	dst = append(dst, host...)
	dst = append(dst, ' ')
	dst = append(dst, app...)
	dst = append(dst, ' ')
	if procid > 0 {
		dst = strconv.AppendInt(dst, int64(procid), 10)
	} else {
		dst = append(dst, '-')
	}
	return append(dst, " - - "...)
}

func internal(dst []byte, i uint64) []byte {
	return fmt.Appendf(dst, "10.%d.%d.%d", i>>8&15, i&255, 1+i%250)
}
func external(dst []byte, i uint64) []byte {
	return fmt.Appendf(dst, "%d.%d.%d.%d", 23+i%180, 7*i%251, i>>3&255, 1+i%253)
}
func scanner(dst []byte, i uint64) []byte { return fmt.Appendf(dst, "198.51.%d.%d", 100+i>>6, 1+i&63) }
func server(dst []byte, i uint64) []byte  { return fmt.Appendf(dst, "10.0.0.%d", 2+i) }

// bytesLog returns a byte count log-uniform between 64 and about 1 MB.
func (g *Generator) bytesLog() int64 {
	return int64(64 * pow2(g.r.Float64()*14))
}

func pow2(x float64) float64 {
	// 2^x without math.Pow's platform differences: integer part by
	// shift, fraction by the first terms of its series (monotonic and
	// deterministic, which is all a byte count needs).
	i := int(x)
	f := x - float64(i)
	return float64(uint64(1)<<i) * (1 + f*(0.6931471805599453+f*(0.2402265069591007+f*0.0555041086648216)))
}

func (g *Generator) firewall(dst []byte, ns int64) []byte {
	host := "fw0" + strconv.Itoa(1+int(g.host.Uint64()))
	dst = appendRFC5424Head(dst, 134, ns, host, "NGFW", 0)
	if g.r.IntN(100) < 18 {
		dst = append(dst, "CEF:0|Acme|NGFW|9.1|traffic|deny|5|src="...)
		dst = scanner(dst, g.scanner.Uint64())
		dst = append(dst, " spt="...)
		dst = strconv.AppendInt(dst, int64(32768+g.r.IntN(28000)), 10)
		dst = append(dst, " dst="...)
		dst = server(dst, g.server.Uint64())
		dst = append(dst, " dpt="...)
		dst = strconv.AppendInt(dst, int64(denyPorts[g.weighted(denyWeight)]), 10)
		return append(dst, " proto=TCP act=deny out=60 in=0 deviceInboundInterface=eth0 cs1Label=Rule cs1=default-deny"...)
	}
	dst = append(dst, "CEF:0|Acme|NGFW|9.1|traffic|accept|3|src="...)
	dst = internal(dst, g.src.Uint64())
	dst = append(dst, " spt="...)
	dst = strconv.AppendInt(dst, int64(32768+g.r.IntN(28000)), 10)
	dst = append(dst, " dst="...)
	dst = external(dst, g.dst.Uint64())
	port := allowPorts[g.weighted(allowWeight)]
	dst = append(dst, " dpt="...)
	dst = strconv.AppendInt(dst, int64(port), 10)
	if port == 53 || port == 123 {
		dst = append(dst, " proto=UDP"...)
	} else {
		dst = append(dst, " proto=TCP"...)
	}
	dst = append(dst, " act=accept out="...)
	dst = strconv.AppendInt(dst, g.bytesLog(), 10)
	dst = append(dst, " in="...)
	dst = strconv.AppendInt(dst, g.bytesLog(), 10)
	return append(dst, " deviceInboundInterface=eth1 cs1Label=Rule cs1=allow-web"...)
}

// daemonMsg is a message template: the program, its priority (facility
// and severity) and the MSG, filled by fill.
type daemonMsg struct {
	weight int
	proc   string
	pri    int
	fill   func(g *Generator, dst []byte) []byte
}

var users = []string{"root", "admin", "ubuntu", "deploy", "test", "oracle", "postgres", "git"}

var daemonMsgs = []daemonMsg{
	{22, "sshd", 86, func(g *Generator, dst []byte) []byte { // authpriv.info
		dst = append(dst, "Failed password for invalid user "...)
		dst = append(dst, users[g.r.IntN(len(users))]...)
		dst = append(dst, " from "...)
		dst = scanner(dst, g.scanner.Uint64())
		return fmt.Appendf(dst, " port %d ssh2", 32768+g.r.IntN(28000))
	}},
	{8, "sshd", 86, func(g *Generator, dst []byte) []byte {
		dst = append(dst, "Connection closed by authenticating user root "...)
		dst = scanner(dst, g.scanner.Uint64())
		return fmt.Appendf(dst, " port %d [preauth]", 32768+g.r.IntN(28000))
	}},
	{4, "sshd", 86, func(g *Generator, dst []byte) []byte {
		dst = fmt.Appendf(dst, "Accepted publickey for %s from ", users[g.r.IntN(3)])
		dst = internal(dst, g.src.Uint64())
		return fmt.Appendf(dst, " port %d ssh2: ED25519 SHA256:%016x", 32768+g.r.IntN(28000), g.r.Uint64())
	}},
	{12, "systemd", 30, func(g *Generator, dst []byte) []byte { // daemon.info
		return fmt.Appendf(dst, "Started Session %d of User %s.", 1000+g.r.IntN(90000), users[g.r.IntN(3)])
	}},
	{10, "systemd", 30, func(g *Generator, dst []byte) []byte {
		units := []string{"apt-daily.service", "logrotate.service", "man-db.service", "fwupd-refresh.service", "motd-news.service"}
		return fmt.Appendf(dst, "%s: Deactivated successfully.", units[g.r.IntN(len(units))])
	}},
	{10, "CRON", 78, func(g *Generator, dst []byte) []byte { // cron.info
		return append(dst, "pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)"...)
	}},
	{6, "CRON", 78, func(g *Generator, dst []byte) []byte {
		cmds := []string{"command -v debian-sa1 > /dev/null && debian-sa1 1 1", "/usr/local/bin/backup.sh --incremental", "cd / && run-parts --report /etc/cron.hourly"}
		return fmt.Appendf(dst, "(root) CMD (%s)", cmds[g.r.IntN(len(cmds))])
	}},
	{14, "kernel", 4, func(g *Generator, dst []byte) []byte { // kern.warning
		dst = fmt.Appendf(dst, "[%d.%06d] [UFW BLOCK] IN=eth0 OUT= MAC=52:54:00:12:34:56:52:54:00:ab:cd:ef:08:00 SRC=", 100000+g.r.IntN(900000), g.r.IntN(1000000))
		dst = scanner(dst, g.scanner.Uint64())
		return fmt.Appendf(dst, " DST=10.0.0.%d LEN=44 TOS=0x00 PREC=0x00 TTL=%d ID=%d PROTO=TCP SPT=%d DPT=%d WINDOW=1024 RES=0x00 SYN URGP=0",
			2+g.server.Uint64(), 40+g.r.IntN(20), g.r.IntN(65536), 32768+g.r.IntN(28000), denyPorts[g.weighted(denyWeight)])
	}},
	{3, "kernel", 3, func(g *Generator, dst []byte) []byte { // kern.err
		return fmt.Appendf(dst, "e1000e 0000:00:1f.6 eno1: NIC Link is Down")
	}},
	{6, "dhcpd", 30, func(g *Generator, dst []byte) []byte {
		dst = append(dst, "DHCPACK on "...)
		dst = internal(dst, g.src.Uint64())
		return fmt.Appendf(dst, " to 52:54:00:%02x:%02x:%02x via eth1", g.r.IntN(256), g.r.IntN(256), g.r.IntN(256))
	}},
	{5, "postfix/smtpd", 22, func(g *Generator, dst []byte) []byte { // mail.info
		dst = append(dst, "warning: hostname "...)
		dst = fmt.Appendf(dst, "host-%d.example.net does not resolve to address ", g.dst.Uint64())
		return external(dst, g.dst.Uint64())
	}},
}

var daemonWeights = func() []int {
	w := make([]int, len(daemonMsgs))
	for i, m := range daemonMsgs {
		w[i] = m.weight
	}
	return w
}()

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func (g *Generator) daemon(dst []byte, ns int64) []byte {
	if g.left == 0 {
		m := &daemonMsgs[g.weighted(daemonWeights)]
		g.burstHost = 1 + int(g.host.Uint64())
		g.burstProc, g.burstPri = m.proc, m.pri
		g.burstPID = 300 + g.r.IntN(60000)
		g.burst = m.fill(g, g.burst[:0])
		// Geometric burst length, mean 12: a daemon repeats itself.
		g.left = 1
		for g.r.IntN(12) != 0 {
			g.left++
		}
	}
	g.left--
	host := fmt.Sprintf("srv%03d", g.burstHost)
	pid := g.burstPID
	if g.burstProc == "kernel" {
		pid = 0
	}
	if g.burstHost%2 == 0 {
		dst = appendRFC5424Head(dst, g.burstPri, ns, host, g.burstProc, pid)
		return append(dst, g.burst...)
	}
	t := time.Unix(0, ns).UTC()
	dst = fmt.Appendf(dst, "<%d>%s %2d %s %s %s", g.burstPri, months[t.Month()-1], t.Day(), t.Format("15:04:05"), host, g.burstProc)
	if pid > 0 {
		dst = fmt.Appendf(dst, "[%d]", pid)
	}
	dst = append(dst, ": "...)
	return append(dst, g.burst...)
}

var vendorWeights = []int{40, 8, 30, 4, 12, 6}

func (g *Generator) vendor(dst []byte, ns int64) []byte {
	dev := int(g.dev.Uint64()) // 0..11: 0-4 PAN-OS, 5-8 FortiGate, 9-10 Check Point, 11 Zscaler
	kind := g.weighted(vendorWeights)
	src, dsta := internal(nil, g.src.Uint64()), external(nil, g.dst.Uint64())
	port := allowPorts[g.weighted(allowWeight)]
	spt := 32768 + g.r.IntN(28000)
	switch kind {
	case 0, 1: // PAN-OS
		host := fmt.Sprintf("pa-%02d", dev%5+1)
		dst = appendRFC5424Head(dst, 110, ns, host, "PAN-OS", 0)
		if kind == 0 {
			app := []string{"ssl", "web-browsing", "dns", "ntp", "ms-office365", "google-base"}[g.r.IntN(6)]
			return fmt.Appendf(dst, "CEF:0|Palo Alto Networks|PAN-OS|11.1.2|end|TRAFFIC|1|rt=%d deviceExternalId=0123456789%02d src=%s dst=%s "+
				"sourceTranslatedAddress=203.0.113.10 destinationTranslatedAddress=%s cs1Label=Rule cs1=allow-outbound suser= duser= "+
				"app=%s cs3Label=Virtual System cs3=vsys1 cs4Label=Source Zone cs4=trust cs5Label=Destination Zone cs5=untrust "+
				"deviceInboundInterface=ethernet1/2 deviceOutboundInterface=ethernet1/1 cs6Label=LogProfile cs6=default cn1Label=SessionID cn1=%d "+
				"cnt=1 spt=%d dpt=%d sourceTranslatedPort=%d destinationTranslatedPort=%d flexString1Label=Flags flexString1=0x400053 proto=tcp "+
				"act=allow flexNumber1Label=Total bytes flexNumber1=%d in=%d out=%d cn2Label=Packets cn2=%d PanOSPacketsReceived=%d PanOSPacketsSent=%d "+
				"start=%d cn3Label=Elapsed time in seconds cn3=%d cs2Label=URL Category cs2=any reason=tcp-fin",
				ns/1e6, dev, src, dsta, dsta, app, g.r.IntN(1<<20), spt, port, 10000+g.r.IntN(50000), port,
				g.bytesLog(), g.bytesLog(), g.bytesLog(), 2+g.r.IntN(200), 1+g.r.IntN(100), 1+g.r.IntN(100), ns/1e6-int64(g.r.IntN(60000)), g.r.IntN(60))
		}
		threat := []string{"Microsoft Windows SMB Remote Code Execution Vulnerability(33385)", "HTTP Directory Traversal Vulnerability(30844)", "SSH User Authentication Brute Force Attempt(40015)"}[g.r.IntN(3)]
		return fmt.Appendf(dst, "CEF:0|Palo Alto Networks|PAN-OS|11.1.2|vulnerability|THREAT|7|rt=%d deviceExternalId=0123456789%02d src=%s dst=10.0.0.%d "+
			"cs1Label=Rule cs1=inbound-dmz app=%s cs3Label=Virtual System cs3=vsys1 cs4Label=Source Zone cs4=untrust cs5Label=Destination Zone cs5=dmz "+
			"spt=%d dpt=%d proto=tcp act=reset-both request=\"%s\" cs2Label=URL Category cs2=any flexString2Label=Direction flexString2=client-to-server "+
			"PanOSThreatCategory=code-execution cat=%s",
			ns/1e6, dev, scanner(nil, g.scanner.Uint64()), 2+g.server.Uint64(), []string{"ms-ds-smbv3", "web-browsing", "ssh"}[g.r.IntN(3)],
			spt, denyPorts[g.weighted(denyWeight)], threat, threat)
	case 2, 3: // FortiGate
		host := fmt.Sprintf("fgt-%02d", dev%4+1)
		dst = appendRFC5424Head(dst, 189, ns, host, "FortiGate", 0)
		if kind == 2 {
			return fmt.Appendf(dst, "CEF:0|Fortinet|Fortigate|v7.4.3|00013|traffic:forward close|3|deviceExternalId=FGT60FTK2209%04d "+
				"FTNTFGTlogid=0000000013 cat=traffic:forward FTNTFGTsubtype=forward FTNTFGTlevel=notice FTNTFGTvd=root FTNTFGTeventtime=%d "+
				"src=%s spt=%d deviceInboundInterface=internal FTNTFGTsrcintfrole=lan dst=%s dpt=%d deviceOutboundInterface=wan1 "+
				"FTNTFGTdstintfrole=wan FTNTFGTsessionid=%d proto=%d act=close FTNTFGTpolicyid=%d FTNTFGTpolicytype=policy FTNTFGTservice=%s "+
				"FTNTFGTdstcountry=United States FTNTFGTsrccountry=Reserved FTNTFGTtrandisp=snat sourceTranslatedAddress=203.0.113.20 "+
				"sourceTranslatedPort=%d FTNTFGTduration=%d out=%d in=%d FTNTFGTsentpkt=%d FTNTFGTrcvdpkt=%d FTNTFGTappcat=unscanned",
				dev, ns, src, spt, dsta, port, g.r.IntN(1<<24), 6, 1+g.r.IntN(20), []string{"HTTPS", "HTTP", "DNS", "NTP"}[g.r.IntN(4)],
				10000+g.r.IntN(50000), g.r.IntN(300), g.bytesLog(), g.bytesLog(), 1+g.r.IntN(100), 1+g.r.IntN(100))
		}
		return fmt.Appendf(dst, "CEF:0|Fortinet|Fortigate|v7.4.3|0211008192|utm:virus infected blocked|4|deviceExternalId=FGT60FTK2209%04d "+
			"FTNTFGTlogid=0211008192 cat=utm:virus FTNTFGTsubtype=virus FTNTFGTlevel=warning FTNTFGTvd=root src=%s spt=%d dst=%s dpt=80 "+
			"act=blocked app=HTTP request=http://%s/download/invoice.zip fname=invoice.zip FTNTFGTvirus=EICAR_TEST_FILE FTNTFGTdtype=Virus "+
			"FTNTFGTref=http://www.fortinet.com/ve?vn\\=EICAR_TEST_FILE msg=File is infected.",
			dev, src, spt, dsta, dsta)
	case 4: // Check Point
		host := fmt.Sprintf("cp-gw%d", dev%2+1)
		dst = appendRFC5424Head(dst, 134, ns, host, "CheckPoint", 0)
		act, sev := "Accept", "Low"
		if g.r.IntN(4) == 0 {
			act, sev = "Drop", "Medium"
			src = scanner(src[:0], g.scanner.Uint64())
			dsta = server(dsta[:0], g.server.Uint64())
			port = denyPorts[g.weighted(denyWeight)]
		}
		return fmt.Appendf(dst, "CEF:0|Check Point|VPN-1 & FireWall-1|Check Point|Log|%s|%s|act=%s deviceDirection=0 rt=%d src=%s spt=%d dst=%s dpt=%d "+
			"proto=6 cs2Label=Rule Name cs2=Cleanup rule cs3Label=Rule UID cs3={A3B4C5D6-1111-2222-3333-%012d} layer_name=Network "+
			"layer_uuid=8a994dd3-993e-4c0c-92a1-a8630b153f4c match_id=%d parent_rule=0 rule_action=%s origin_sic_name=CN\\=%s,O\\=mgmt..abc123 "+
			"product=VPN-1 & FireWall-1 service_id=%d",
			act, sev, act, ns/1e6, src, spt, dsta, port, dev, 1+g.r.IntN(40), act, host, port)
	default: // Zscaler NSS web
		dst = appendRFC5424Head(dst, 134, ns, "zscaler-nss", "NSS", 0)
		u := users[g.r.IntN(len(users))]
		return fmt.Appendf(dst, "CEF:0|Zscaler|NSSWeblog|6.2|%s|%s|3|act=%s reason=%s app=HTTPS cat=%s dhost=host-%d.example.net "+
			"src=%s dst=%s suser=%s@example.com spriv=Engineering requestMethod=GET request=https://host-%d.example.net/path/%d "+
			"requestClientApplication=Mozilla/5.0 (Windows NT 10.0; Win64; x64) out=%d in=%d fileType=None outcome=200 cs1Label=dept cs1=Engineering "+
			"cs2Label=urlcat cs2=%s cs3Label=location cs3=HQ cn1Label=riskscore cn1=%d",
			"Allowed", "Allowed", "Allowed", "Allowed", []string{"Professional Services", "Web Search", "Corporate Marketing"}[g.r.IntN(3)],
			g.dst.Uint64(), src, dsta, u, g.dst.Uint64(), g.r.IntN(1000), g.bytesLog(), g.bytesLog(),
			[]string{"Professional Services", "Web Search", "Corporate Marketing"}[g.r.IntN(3)], g.r.IntN(100))
	}
}
