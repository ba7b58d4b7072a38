// Package reallines generates realistic syslog and CEF lines of about
// 1.2 KB for the Sentinel benchmarks: RFC 5424 messages from application
// servers, web servers, the Linux audit system and Kubernetes components,
// and CEF traffic and threat records of a next-generation firewall. The
// text repeats the way real logs do (fixed templates, a small set of
// hosts, users, paths and user agents) and varies where real logs vary
// (addresses, ports, IDs, trace IDs, counters, durations), so that gzip
// shrinks a stream of syslog lines about 3× (3.1× at level 1, 3.8× at 6)
// and of CEF lines, whose labels repeat, 5-6×: neither random bytes
// (which do not compress) nor one line repeated (which compresses a
// hundredfold) gives a compressor's real cost.
//
// A Gen is deterministic for its seed and not safe for concurrent use.
package reallines

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Size is the target length of a line, without its LF, in bytes.
const Size = 1200

// Gen generates lines.
type Gen struct {
	r   *rand.Rand
	seq int
}

// New returns a generator seeded with seed.
func New(seed uint64) *Gen { return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

var (
	hosts  = []string{"app-billing-01", "app-billing-02", "web-frontend-07", "web-frontend-08", "k8s-node-a3", "k8s-node-b1", "db-replica-2", "auth-gw-01", "batch-etl-04", "mail-relay-1"}
	users  = []string{"alice", "bob", "carol", "dave", "svc_backup", "svc_deploy", "erin", "frank", "grace", "mallory", "root", "www-data"}
	paths  = []string{"/api/v1/orders", "/api/v1/items", "/api/v2/customers", "/checkout/confirm", "/static/js/app.bundle.js", "/login", "/graphql", "/api/v1/payments/authorize", "/healthz", "/admin/reports/export"}
	agents = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
		"okhttp/4.12.0", "curl/8.5.0", "python-requests/2.32.3", "Go-http-client/2.0",
	}
	words = []string{"timeout", "retry", "upstream", "connection", "reset", "by", "peer", "while", "reading", "response", "header", "from",
		"cache", "miss", "for", "key", "session", "expired", "token", "refresh", "failed", "validation", "error", "in", "field", "quantity",
		"payment", "declined", "insufficient", "funds", "backend", "pool", "exhausted", "waiting", "lock", "deadlock", "detected", "rolled", "back"}
	levels = []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	apps   = []string{"billing", "inventory", "gateway", "scheduler", "notifier"}
	cats   = []string{"business-and-economy", "computer-and-internet-info", "content-delivery-networks", "social-networking", "web-based-email", "search-engines", "unknown"}
	acts   = []string{"allow", "allow", "allow", "deny", "drop", "reset-both"}
	apps7  = []string{"ssl", "web-browsing", "dns", "ms-office365-base", "google-base", "ntp", "ldap", "smb", "incomplete"}
)

func (g *Gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *Gen) ip(b []byte, private bool) []byte {
	if private {
		b = append(b, "10."...)
		b = strconv.AppendInt(b, int64(g.r.IntN(32)), 10)
	} else {
		b = strconv.AppendInt(b, int64(g.r.IntN(200)+20), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(g.r.IntN(256)), 10)
	}
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(g.r.IntN(256)), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, int64(g.r.IntN(254)+1), 10)
}

const hexdig = "0123456789abcdef"

func (g *Gen) hex(b []byte, n int) []byte {
	for range n {
		b = append(b, hexdig[g.r.IntN(16)])
	}
	return b
}

func (g *Gen) uuid(b []byte) []byte {
	b = g.hex(b, 8)
	b = append(b, '-')
	b = g.hex(b, 4)
	b = append(b, "-4"...)
	b = g.hex(b, 3)
	b = append(b, '-')
	b = g.hex(b, 4)
	b = append(b, '-')
	return g.hex(b, 12)
}

func (g *Gen) words(b []byte, n int) []byte {
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, g.pick(words)...)
	}
	return b
}

// stamp appends an RFC 3339 timestamp that advances with the line number.
func (g *Gen) stamp(b []byte) []byte {
	s := g.seq / 50
	return fmt.Appendf(b, "2026-11-22T%02d:%02d:%02d.%06dZ", 1+s/3600%20, s/60%60, s%60, g.r.IntN(1000000))
}

// pad appends key=value pairs of a request's context until b is n bytes
// long (or longer, by at most one pair).
func (g *Gen) pad(b []byte, n int) []byte {
	for len(b) < n {
		switch g.r.IntN(5) {
		case 0:
			b = append(b, " span_id="...)
			b = g.hex(b, 16)
		case 1:
			b = append(b, " db_ms="...)
			b = strconv.AppendInt(b, int64(g.r.IntN(900)), 10)
			b = append(b, " rows="...)
			b = strconv.AppendInt(b, int64(g.r.IntN(5000)), 10)
		case 2:
			b = append(b, " note=\""...)
			b = g.words(b, 4+g.r.IntN(6))
			b = append(b, '"')
		case 3:
			b = append(b, " peer="...)
			b = g.ip(b, true)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(1024+g.r.IntN(60000)), 10)
		default:
			b = append(b, " user="...)
			b = append(b, g.pick(users)...)
			b = append(b, " tenant=t-"...)
			b = strconv.AppendInt(b, int64(g.r.IntN(40)), 10)
		}
	}
	return b
}

// Syslog appends one RFC 5424 line (no LF) of about Size bytes to b.
func (g *Gen) Syslog(b []byte) []byte {
	g.seq++
	start := len(b)
	host := g.pick(hosts)
	switch g.r.IntN(4) {
	case 0: // Java application log with a stack trace folded onto one line
		app := g.pick(apps)
		lvl := g.pick(levels)
		b = fmt.Appendf(b, "<%d>1 ", 16*8+3+g.r.IntN(4))
		b = g.stamp(b)
		b = fmt.Appendf(b, " %s %s %d - [meta@32473 env=\"prod\" region=\"westeurope\" build=\"2026.11.%d\"] %s [http-nio-8080-exec-%d] com.example.%s.service.%sService - ",
			host, app, 2000+g.r.IntN(60000), 3+g.r.IntN(3), lvl, g.r.IntN(200), app, "Order")
		b = g.words(b, 6+g.r.IntN(6))
		b = append(b, " order=ORD-"...)
		b = strconv.AppendInt(b, int64(g.r.IntN(1e8)), 10)
		b = append(b, " customer="...)
		b = g.uuid(b)
		b = append(b, " trace_id="...)
		b = g.hex(b, 32)
		b = fmt.Appendf(b, " | java.net.SocketTimeoutException: Read timed out | at java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:%d) | at com.example.%s.client.GatewayClient.call(GatewayClient.java:%d) | at com.example.%s.service.OrderService.authorize(OrderService.java:%d)",
			280+g.r.IntN(9), app, 100+g.r.IntN(200), app, 50+g.r.IntN(300))
	case 1: // web server access log
		b = append(b, "<190>1 "...)
		b = g.stamp(b)
		b = fmt.Appendf(b, " %s nginx %d access - ", host, 900+g.r.IntN(50))
		b = g.ip(b, false)
		b = fmt.Appendf(b, " - %s \"GET %s?id=%d&session=", g.pick(users), g.pick(paths), g.r.IntN(1e6))
		b = g.hex(b, 24)
		b = fmt.Appendf(b, "&utm_source=newsletter&utm_medium=email HTTP/2.0\" %d %d \"https://shop.example.com%s\" \"%s\" rt=%d.%03d uct=0.%03d request_id=",
			[]int{200, 200, 200, 304, 404, 500, 502}[g.r.IntN(7)], g.r.IntN(90000), g.pick(paths), g.pick(agents), g.r.IntN(3), g.r.IntN(1000), g.r.IntN(100))
		b = g.hex(b, 32)
	case 2: // Linux audit record
		b = append(b, "<86>1 "...)
		b = g.stamp(b)
		n := g.r.IntN(1e6)
		b = fmt.Appendf(b, " %s auditd %d - - type=SYSCALL msg=audit(1795574341.%03d:%d): arch=c000003e syscall=59 success=yes exit=0 a0=%x a1=%x a2=%x a3=0 items=2 ppid=%d pid=%d auid=%d uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=pts%d ses=%d comm=\"sudo\" exe=\"/usr/bin/sudo\" subj=unconfined key=\"privileged\" type=EXECVE argc=4 a0=\"sudo\" a1=\"systemctl\" a2=\"restart\" a3=\"%s.service\" type=CWD cwd=\"/home/%s\" type=PATH item=0 name=\"/usr/bin/sudo\" inode=%d dev=fd:01 mode=0104755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0",
			host, 700+g.r.IntN(90), g.r.IntN(1000), n, g.r.Uint32(), g.r.Uint32(), g.r.Uint32(), 1000+g.r.IntN(30000), 1000+g.r.IntN(30000), 1000+g.r.IntN(20), g.r.IntN(8), g.r.IntN(5000), g.pick(apps), g.pick(users), g.r.IntN(1e7))
	default: // Kubernetes component logging JSON
		b = append(b, "<134>1 "...)
		b = g.stamp(b)
		b = fmt.Appendf(b, ` %s kubelet %d - - {"level":"%s","ts":%d.%06d,"caller":"kuberuntime/kuberuntime_manager.go:%d","msg":"`,
			host, 1100+g.r.IntN(20), []string{"info", "info", "warn", "error"}[g.r.IntN(4)], 1795574341+g.seq/50, g.r.IntN(1e6), 900+g.r.IntN(200))
		b = g.words(b, 5+g.r.IntN(5))
		b = fmt.Appendf(b, `","pod":"%s-%s-`, g.pick(apps), "7d9f8c6b5")
		b = g.hex(b, 5)
		b = append(b, `","namespace":"prod","containerID":"containerd://`...)
		b = g.hex(b, 64)
		b = fmt.Appendf(b, `","restartCount":%d,"image":"registry.example.com/%s:2026.11.%d","podUID":"`, g.r.IntN(9), g.pick(apps), g.r.IntN(30))
		b = g.uuid(b)
		b = append(b, `"}`...)
	}
	return g.pad(b, start+Size)
}

// CEF appends one RFC 5424 line (no LF) carrying a CEF record of a
// firewall's traffic or threat log, of about Size bytes, to b.
func (g *Gen) CEF(b []byte) []byte {
	g.seq++
	start := len(b)
	fw := fmt.Sprintf("fw-edge-%02d", g.r.IntN(4))
	b = append(b, "<134>1 "...)
	b = g.stamp(b)
	threat := g.r.IntN(5) == 0
	kind, name, sev := "TRAFFIC", "end", 3
	if threat {
		kind, name, sev = "THREAT", "url", 5+g.r.IntN(4)
	}
	b = fmt.Appendf(b, " %s PAN-OS - - - CEF:0|Palo Alto Networks|PAN-OS|10.2.4|%s|%s|%d|rt=Nov 22 2026 01:%02d:%02d GMT deviceExternalId=0%09d src=",
		fw, kind, name, sev, g.r.IntN(60), g.r.IntN(60), 111111111*(1+g.r.IntN(4)))
	b = g.ip(b, true)
	b = append(b, " dst="...)
	b = g.ip(b, false)
	b = append(b, " sourceTranslatedAddress=203.0.113."...)
	b = strconv.AppendInt(b, int64(1+g.r.IntN(8)), 10)
	b = append(b, " destinationTranslatedAddress="...)
	b = g.ip(b, false)
	act := g.pick(acts)
	b = fmt.Appendf(b, ` cs1Label=Rule cs1=%s-%s suser=corp\\%s duser= cs2Label=Application cs2=%s cs3Label=Virtual System cs3=vsys1 cs4Label=Source Zone cs4=trust cs5Label=Destination Zone cs5=untrust deviceInboundInterface=ethernet1/%d deviceOutboundInterface=ethernet1/1 cs6Label=LogProfile cs6=forward-to-siem cn1Label=SessionID cn1=%d cnt=1 spt=%d dpt=%d flexString1Label=Flags flexString1=0x%x proto=%s act=%s flexNumber1Label=Total bytes flexNumber1=%d in=%d out=%d cn2Label=Packets cn2=%d PanOSPacketsReceived=%d PanOSPacketsSent=%d start=%d cn3Label=Elapsed time in seconds cn3=%d cs2Label=URL Category cs2=%s externalId=%d reason=%s`,
		act, g.pick(apps), g.pick(users), g.pick(apps7), 2+g.r.IntN(3), g.r.IntN(1e7), 1024+g.r.IntN(60000), []int{443, 443, 80, 53, 22, 3389, 8443}[g.r.IntN(7)],
		g.r.Uint32()&0xffffff, []string{"TCP", "TCP", "UDP"}[g.r.IntN(3)], act, g.r.IntN(1e6), g.r.IntN(5e5), g.r.IntN(5e5),
		g.r.IntN(3000), g.r.IntN(1500), g.r.IntN(1500), 1795574341000+int64(g.r.IntN(1e6)), g.r.IntN(600), g.pick(cats), g.r.Int64N(1e12),
		[]string{"tcp-fin", "tcp-rst-from-client", "aged-out", "policy-deny"}[g.r.IntN(4)])
	b = fmt.Appendf(b, " request=https://%s.example.%s%s?q=", g.pick(apps), []string{"com", "net", "org"}[g.r.IntN(3)], g.pick(paths))
	b = g.hex(b, 20)
	b = fmt.Appendf(b, " requestClientApplication=%s requestMethod=GET", g.pick(agents))
	b = append(b, " fileHash="...)
	b = g.hex(b, 64)
	b = append(b, " msg="...)
	b = g.words(b, 3)
	for len(b) < start+Size-16 {
		b = append(b, ' ')
		b = g.words(b, 2)
		b = append(b, " sid="...)
		b = g.hex(b, 16)
	}
	return b
}

// FortiGate appends one FortiGate log line (no LF) of about Size bytes
// in FortiOS's default syslog format, key=value pairs after the PRI with
// no syslog header: a forward traffic log (four in five) or a UTM web
// filter log, carrying what the CEF lines carry (addresses, ports, NAT,
// interfaces, zones, policy, application, bytes and packets, URL, user
// agent) under FortiOS's own keys.
func (g *Gen) FortiGate(b []byte) []byte {
	g.seq++
	start := len(b)
	s := g.seq / 50
	utm := g.r.IntN(5) == 0
	pri, logid, typ, sub, level := 189, "0000000013", "traffic", "forward", "notice"
	if utm {
		pri, logid, typ, sub, level = 188, "0316013056", "utm", "webfilter", "warning"
	}
	dev := g.r.IntN(4)
	b = fmt.Appendf(b, `<%d>date=2026-11-22 time=%02d:%02d:%02d devname="fgt-edge-%02d" devid="FG200FTK229%05d" eventtime=%d%09d tz="+0100" logid="%s" type="%s" subtype="%s" level="%s" vd="root" srcip=`,
		pri, 1+s/3600%20, s/60%60, s%60, dev, 10000*(1+dev), 1795000000+s, g.r.IntN(1e9), logid, typ, sub, level)
	b = g.ip(b, true)
	b = fmt.Appendf(b, ` srcport=%d srcintf="port%d" srcintfrole="lan" srcuuid="`, 1024+g.r.IntN(60000), 2+g.r.IntN(3))
	b = g.uuid(b)
	b = append(b, `" dstip=`...)
	b = g.ip(b, false)
	act := []string{"accept", "accept", "close", "close", "deny", "timeout"}[g.r.IntN(6)]
	if utm {
		act = "blocked"
	}
	b = fmt.Appendf(b, ` dstport=%d dstintf="port1" dstintfrole="wan" dstuuid="`, []int{443, 443, 80, 53, 22, 3389, 8443}[g.r.IntN(7)])
	b = g.uuid(b)
	b = fmt.Appendf(b, `" srccountry="Reserved" dstcountry="%s" sessionid=%d proto=%d action="%s" policyid=%d policytype="policy" poluuid="`,
		[]string{"United States", "Germany", "Netherlands", "Ireland", "France"}[g.r.IntN(5)], g.r.IntN(1e9), []int{6, 6, 17}[g.r.IntN(3)], act, 1+g.r.IntN(40))
	b = g.uuid(b)
	b = fmt.Appendf(b, `" policyname="%s-%s" user="%s" service="%s" trandisp="snat" transip=203.0.113.%d transport=%d appid=%d app="%s" appcat="%s" apprisk="%s" applist="default" duration=%d sentbyte=%d rcvdbyte=%d sentpkt=%d rcvdpkt=%d`,
		act, g.pick(apps), g.pick(users), []string{"HTTPS", "HTTP", "DNS", "SSH", "RDP"}[g.r.IntN(5)], 1+g.r.IntN(8), 1024+g.r.IntN(60000),
		g.r.IntN(50000), g.pick(apps7), g.pick(cats), []string{"low", "medium", "elevated", "high"}[g.r.IntN(4)], g.r.IntN(600),
		g.r.IntN(5e5), g.r.IntN(5e5), g.r.IntN(3000), g.r.IntN(3000))
	if utm {
		b = fmt.Appendf(b, ` eventtype="ftgd_blk" hostname="%s.example.%s" profile="default" reqtype="direct" url="%s?q=`,
			g.pick(apps), []string{"com", "net", "org"}[g.r.IntN(3)], g.pick(paths))
		b = g.hex(b, 20)
		b = fmt.Appendf(b, `" direction="outgoing" method="domain" cat=%d catdesc="%s" crscore=30 craction=4194304 crlevel="high" msg="URL belongs to a denied category in policy"`,
			g.r.IntN(90), g.pick(cats))
	} else {
		b = fmt.Appendf(b, ` vwlid=0 utmaction="allow" countweb=%d countapp=%d mastersrcmac="`, g.r.IntN(3), g.r.IntN(3))
		for i := range 6 {
			if i > 0 {
				b = append(b, ':')
			}
			b = g.hex(b, 2)
		}
		b = fmt.Appendf(b, `" srcmac="00:0c:29:%02x:%02x:%02x" srcserver=0`, g.r.IntN(256), g.r.IntN(256), g.r.IntN(256))
	}
	b = fmt.Appendf(b, ` agent="%s" srchwvendor="%s" osname="%s"`, g.pick(agents),
		[]string{"VMware", "Dell", "Apple", "Lenovo"}[g.r.IntN(4)], []string{"Windows", "Linux", "macOS"}[g.r.IntN(3)])
	for i := 1; len(b) < start+Size-24; i++ {
		b = fmt.Appendf(b, ` utmref%d=%d-%d`, i, g.r.IntN(65536), g.r.Int64N(1e12))
	}
	return b
}
