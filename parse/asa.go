package parse

import (
	"bytes"

	"github.com/relaykit/relaykit"
)

// Cisco ASA and Firepower Threat Defense: "%ASA-6-302013: Built inbound TCP
// connection ..." messages (Cisco Secure Firewall ASA Series Syslog
// Messages), read by message ID. The ID goes to DeviceEventClassID and the
// severity of the tag to LogSeverity, as the Azure Monitor Agent maps
// them; the connection, ACL and NAT messages listed in asaLayouts are read
// into CEF's names.

// asaMsg is what one message's layout yields.
type asaMsg struct {
	act, proto, dir          []byte // dir: "inbound" or "outbound"
	src, spt, dst, dpt       []byte
	srcIf, dstIf             []byte
	srcNAT, srcNATPort       []byte
	dstNAT, dstNATPort       []byte
	suser, duser             []byte
	conn, acl, cnt           []byte
	icmpType, icmpCode       []byte
	duration, bytes, reason  []byte
	tcpFlags, object, rateID []byte
	translation              []byte // static or dynamic
}

// asaLayout reads the text of message ID num into m with the ID's
// layout; known is false for an ID without one, ok false when the text
// does not have it. A switch rather than a map of funcs keeps m on the
// caller's stack.
func asaLayout(num int, m *asaMsg, t []byte) (known, ok bool) {
	switch num {
	case 106001:
		return true, asa106001(m, t)
	case 106002:
		return true, asa106002(m, t)
	case 106006, 106007:
		return true, asa106006(m, t)
	case 106010:
		return true, asa106010(m, t)
	case 106014:
		return true, asa106014(m, t)
	case 106015:
		return true, asa106015(m, t)
	case 106021:
		return true, asa106021(m, t)
	case 106023:
		return true, asa106023(m, t)
	case 106100:
		return true, asa106100(m, t)
	case 302013, 302015:
		return true, asaBuilt(m, t)
	case 302014, 302016:
		return true, asaTeardown(m, t)
	case 302020, 302021:
		return true, asaICMP(m, t)
	case 305011, 305012:
		return true, asaXlate(m, t)
	case 313001:
		return true, asa313001(m, t)
	case 313004:
		return true, asa313004(m, t)
	case 710002, 710003, 710005:
		return true, asa7100xx(m, t)
	case 733100:
		return true, asa733100(m, t)
	}
	return false, false
}

// Words the layouts store, made once.
var (
	wBuilt       = []byte("Built")
	wTeardown    = []byte("Teardown")
	wDeny        = []byte("Deny")
	wDenied      = []byte("Denied")
	wDeniedLower = []byte("denied")
	wInbound     = []byte("inbound")
	wOutbound    = []byte("outbound")
	wReversePath = []byte("reverse path check")
	wPermitted   = []byte("permitted")
	wDiscarded   = []byte("discarded")
	wDropRate    = []byte("drop rate exceeded")
)

// asaNames are the Activity (cef.name) of the IDs read.
var asaNames = map[int]string{
	106001: "Inbound TCP connection denied", 106002: "Outbound connection denied",
	106006: "Deny inbound UDP", 106007: "Deny inbound UDP due to DNS", 106010: "Deny inbound",
	106014: "Deny ICMP", 106015: "Deny TCP (no connection)", 106021: "Deny reverse path check",
	106023: "Deny by access-group", 106100: "Access list hit",
	302013: "Built TCP connection", 302014: "Teardown TCP connection",
	302015: "Built UDP connection", 302016: "Teardown UDP connection",
	302020: "Built ICMP connection", 302021: "Teardown ICMP connection",
	305011: "Built translation", 305012: "Teardown translation",
	313001: "Denied ICMP", 313004: "Denied ICMP (no matching session)",
	710002: "Access permitted", 710003: "Access denied by ACL", 710005: "Request discarded",
	733100: "Drop rate exceeded",
}

var (
	hMsg        = hash("msg")
	hAct        = hash("act")
	hProto      = hash("proto")
	hDirection  = hash("deviceDirection")
	hSrc        = hash("src")
	hSpt        = hash("spt")
	hDst        = hash("dst")
	hDpt        = hash("dpt")
	hInIf       = hash("deviceInboundInterface")
	hOutIf      = hash("deviceOutboundInterface")
	hSrcNAT     = hash("sourceTranslatedAddress")
	hSrcNATPort = hash("sourceTranslatedPort")
	hDstNAT     = hash("destinationTranslatedAddress")
	hDstNATPort = hash("destinationTranslatedPort")
	hSuser      = hash("suser")
	hDuser      = hash("duser")
	hExternalID = hash("externalId")
	hCnt        = hash("cnt")
	hCS1        = hash("cs1")
	hCS1Label   = hash("cs1Label")
	hCS2        = hash("cs2")
	hICMPType   = hash("icmp_type")
	hICMPCode   = hash("icmp_code")
	hDuration   = hash("duration")
	hBytes      = hash("bytes")
	hReason     = hash("reason")
	hTCPFlags   = hash("tcp_flags")
	hXlate      = hash("translation_type")
)

// asaTag finds a Cisco tag: the syslog parser's msgid ("ASA-6-302013"),
// else "%ASA-6-302013: " in the text. It returns the product, severity,
// ID (as a number and as text) and the message text after the tag.
func asaTag(e *relaykit.Event, text []byte) (prod, sev, id []byte, num int, msg []byte, ok bool) {
	if mid, found := e.Field("msgid"); found {
		if prod, sev, id, num, ok = splitCiscoTag(mid); ok {
			return prod, sev, id, num, text, true
		}
	}
	for _, p := range [...]string{"%ASA-", "%FTD-", "%PIX-"} {
		i := bytes.Index(text, []byte(p))
		if i < 0 {
			continue
		}
		end := bytes.Index(text[i:], []byte(": "))
		if end < 0 {
			end = len(text) - i
		}
		if prod, sev, id, num, ok = splitCiscoTag(text[i+1 : i+end]); ok {
			msg = text[min(i+end+2, len(text)):]
			return prod, sev, id, num, msg, true
		}
	}
	return nil, nil, nil, 0, nil, false
}

// splitCiscoTag splits "ASA-6-302013" (or FTD, PIX).
func splitCiscoTag(t []byte) (prod, sev, id []byte, num int, ok bool) {
	if len(t) != 12 || t[3] != '-' || t[5] != '-' || t[4] < '0' || t[4] > '7' {
		return
	}
	switch string(t[:3]) {
	case "ASA", "FTD", "PIX":
	default:
		return
	}
	n, okn := digits(t, 6, 6)
	if !okn {
		return
	}
	return t[:3], t[4:5], t[6:], n, true
}

// parseASA maps one Cisco ASA or FTD message; see the package
// documentation.
func parseASA(_ *Vendor, w *fieldWriter, text []byte) error {
	prod, sev, id, num, msg, ok := asaTag(w.e, text)
	if !ok {
		return ErrNoMatch
	}
	w.setString(hVendor, "Cisco")
	w.setBytes(hProduct, prod)
	w.setBytes(hClassID, id)
	w.setBytes(hSeverity, sev)
	w.setBytes(hMsg, msg)
	var m asaMsg
	known, ok := asaLayout(num, &m, msg)
	switch {
	case !known:
		return errUnknown
	case !ok:
		return errMismatch
	}
	w.setString(hName, asaNames[num])
	m.write(w)
	return nil
}

// write stores the fields m holds.
func (m *asaMsg) write(w *fieldWriter) {
	set := func(h hashed, v []byte) {
		if len(v) > 0 {
			w.setBytes(h, v)
		}
	}
	set(hAct, m.act)
	set(hProto, m.proto)
	switch string(m.dir) {
	case "inbound":
		w.setString(hDirection, "0")
	case "outbound":
		w.setString(hDirection, "1")
	}
	set(hSrc, m.src)
	set(hSpt, m.spt)
	set(hDst, m.dst)
	set(hDpt, m.dpt)
	set(hInIf, m.srcIf)
	set(hOutIf, m.dstIf)
	set(hSrcNAT, m.srcNAT)
	set(hSrcNATPort, m.srcNATPort)
	set(hDstNAT, m.dstNAT)
	set(hDstNATPort, m.dstNATPort)
	set(hSuser, m.suser)
	set(hDuser, m.duser)
	set(hExternalID, m.conn)
	if len(m.acl) > 0 {
		w.setBytes(hCS1, m.acl)
		w.setString(hCS1Label, "Access List")
	}
	if len(m.object) > 0 {
		w.setBytes(hCS1, m.object)
		w.setString(hCS1Label, "Threat Detection Object")
		w.setBytes(hCS2, m.rateID)
		w.setString(hCS2Label, "Rate ID")
	}
	set(hCnt, m.cnt)
	set(hICMPType, m.icmpType)
	set(hICMPCode, m.icmpCode)
	set(hDuration, m.duration)
	set(hBytes, m.bytes)
	set(hReason, m.reason)
	set(hTCPFlags, m.tcpFlags)
	set(hXlate, m.translation)
}

// cursor reads a message from left to right; ok turns false at the first
// thing that does not match and stays false.
type cursor struct {
	b  []byte
	ok bool
}

func newCursor(b []byte) cursor { return cursor{b: b, ok: true} }

// lit consumes s, which must come next.
func (c *cursor) lit(s string) {
	if c.ok && len(c.b) >= len(s) && string(c.b[:len(s)]) == s {
		c.b = c.b[len(s):]
		return
	}
	c.ok = false
}

// word returns the bytes up to the next space (or the end) and consumes
// them and the space.
func (c *cursor) word() []byte {
	if !c.ok {
		return nil
	}
	i := bytes.IndexByte(c.b, ' ')
	if i < 0 {
		w := c.b
		c.b = c.b[len(c.b):]
		return w
	}
	w := c.b[:i]
	c.b = c.b[i+1:]
	return w
}

// until returns the bytes before the next s and consumes them and s.
func (c *cursor) until(s string) []byte {
	if !c.ok {
		return nil
	}
	i := bytes.Index(c.b, []byte(s))
	if i < 0 {
		c.ok = false
		return nil
	}
	w := c.b[:i]
	c.b = c.b[i+len(s):]
	return w
}

// oneOf consumes the next word, which must be one of words, and returns
// it.
func (c *cursor) oneOf(words ...string) []byte {
	w := c.word()
	for _, x := range words {
		if string(w) == x {
			return w
		}
	}
	c.ok = false
	return nil
}

// splitAddrPort splits "addr/port" at its last '/'; without one, all is the
// address.
func splitAddrPort(b []byte) (addr, port []byte) {
	if i := bytes.LastIndexByte(b, '/'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// splitIfAddr splits "interface:addr/port" at its first ':' (interface
// names hold no ':', IPv6 addresses do).
func splitIfAddr(b []byte) (ifc, addr, port []byte, ok bool) {
	i := bytes.IndexByte(b, ':')
	if i <= 0 {
		return nil, nil, nil, false
	}
	addr, port = splitAddrPort(b[i+1:])
	return b[:i], addr, port, len(addr) > 0
}

// side reads one side of a connection message: "interface:addr/port",
// optionally followed by "(mapped-addr/mapped-port)" and "(user)" groups,
// with or without a space before each.
func side(b []byte) (ifc, addr, port, maddr, mport, user []byte, ok bool) {
	ep, maddr, mport, user := groups(b)
	ifc, addr, port, ok = splitIfAddr(ep)
	return ifc, addr, port, maddr, mport, user, ok
}

// groups splits b into what precedes its first space or '(' and the
// parenthesized groups after it: the first holding a '/' is a mapped
// address, the first other one a user.
func groups(b []byte) (ep, maddr, mport, user []byte) {
	b = trimBytes(b)
	// The endpoint ends at the first space or '(' after its colon (an
	// interface name may hold spaces: "NP Identity Ifc:10.1.1.1/22").
	from := max(bytes.IndexByte(b, ':'), 0)
	if k := bytes.IndexByte(b, '('); k >= 0 && k < from {
		from = 0 // "(" before any colon: no interface
	}
	ep = b
	if i := bytes.IndexAny(b[from:], " ("); i >= 0 {
		ep, b = b[:from+i], b[from+i:]
	} else {
		b = nil
	}
	mapped := false
	for {
		b = trimBytes(b)
		if len(b) == 0 || b[0] != '(' {
			break
		}
		j := bytes.IndexByte(b, ')')
		if j < 0 {
			break
		}
		g := b[1:j]
		b = b[j+1:]
		if !mapped && user == nil && bytes.IndexByte(g, '/') > 0 {
			maddr, mport = splitAddrPort(g)
			mapped = true
			continue
		}
		if user == nil {
			user = g
		}
	}
	return ep, maddr, mport, user
}

// asaBuilt reads 302013 and 302015: Built {inbound|outbound} {TCP|UDP}
// connection id for if:addr/port (mapped) [(user)] to if:addr/port (mapped)
// [(user)]. The "for" side is the outside one: for an outbound connection
// the initiator, the source, is the "to" side.
func asaBuilt(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Built ")
	m.dir = c.oneOf("inbound", "outbound")
	m.proto = c.word()
	c.lit("connection ")
	m.conn = c.word()
	c.lit("for ")
	left := c.until(" to ")
	if !c.ok {
		return false
	}
	right := c.b
	ai, aa, ap, ama, amp, au, ok1 := side(left)
	bi, ba, bp, bma, bmp, bu, ok2 := side(right)
	if !ok1 || !ok2 {
		return false
	}
	m.act = wBuilt
	if string(m.dir) == "outbound" {
		ai, aa, ap, ama, amp, au, bi, ba, bp, bma, bmp, bu = bi, ba, bp, bma, bmp, bu, ai, aa, ap, ama, amp, au
	}
	m.srcIf, m.src, m.spt, m.srcNAT, m.srcNATPort, m.suser = ai, aa, ap, ama, amp, au
	m.dstIf, m.dst, m.dpt, m.dstNAT, m.dstNATPort, m.duser = bi, ba, bp, bma, bmp, bu
	if string(m.srcNAT) == string(m.src) && string(m.srcNATPort) == string(m.spt) {
		m.srcNAT, m.srcNATPort = nil, nil // not translated
	}
	if string(m.dstNAT) == string(m.dst) && string(m.dstNATPort) == string(m.dpt) {
		m.dstNAT, m.dstNATPort = nil, nil
	}
	return true
}

// asaTeardown reads 302014 and 302016: Teardown {TCP|UDP} connection id
// for if:addr/port [(user)] to if:addr/port [(user)] duration h:mm:ss
// bytes n [reason] [(user)]. Without a direction, the "for" side is the
// source.
func asaTeardown(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Teardown ")
	m.proto = c.word()
	c.lit("connection ")
	m.conn = c.word()
	c.lit("for ")
	left := c.until(" to ")
	right := c.until(" duration ")
	m.duration = c.word()
	c.lit("bytes ")
	m.bytes = c.word()
	if !c.ok {
		return false
	}
	var ok1, ok2 bool
	m.srcIf, m.src, m.spt, _, _, m.suser, ok1 = side(left)
	m.dstIf, m.dst, m.dpt, _, _, m.duser, ok2 = side(right)
	if r := trimBytes(c.b); len(r) > 0 {
		if r[len(r)-1] == ')' { // a trailing (user)
			if i := bytes.LastIndexByte(r, '('); i >= 0 {
				r = trimBytes(r[:i])
			}
		}
		m.reason = r
	}
	m.act = wTeardown
	return ok1 && ok2
}

// asaICMP reads 302020 and 302021: {Built {in|out}bound|Teardown} ICMP
// connection for faddr a/id [(user)] gaddr a/id laddr a/id [(user)] ...
// [type t code c]. Inbound, the foreign address is the source and the
// global one the destination's translation; outbound, the local address
// is the source and the global one its translation.
func asaICMP(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	switch {
	case bytes.HasPrefix(t, []byte("Built ")):
		c.lit("Built ")
		dir := c.oneOf("inbound", "outbound")
		m.dir, m.act = dir, wBuilt
	default:
		c.lit("Teardown ")
		m.act = wTeardown
	}
	m.proto = c.word()
	c.lit("connection for faddr ")
	faddr, _ := splitAddrPort(c.word())
	c.until("gaddr ")
	gaddr, _ := splitAddrPort(c.word())
	c.lit("laddr ")
	laddr, _ := splitAddrPort(c.word())
	if !c.ok {
		return false
	}
	if string(m.dir) == "outbound" {
		m.src, m.dst, m.srcNAT = laddr, faddr, gaddr
	} else {
		m.src, m.dst, m.dstNAT = faddr, laddr, gaddr
	}
	if i := bytes.Index(c.b, []byte("type ")); i >= 0 {
		c.b = c.b[i+5:]
		m.icmpType = c.word()
		if bytes.HasPrefix(c.b, []byte("code ")) {
			c.lit("code ")
			m.icmpCode = c.word()
		}
	}
	if string(m.srcNAT) == string(m.src) {
		m.srcNAT = nil
	}
	if string(m.dstNAT) == string(m.dst) {
		m.dstNAT = nil
	}
	return true
}

// fromTo reads "from addr/port to addr/port".
func (c *cursor) fromTo(m *asaMsg) {
	c.lit("from ")
	m.src, m.spt = splitAddrPort(c.word())
	c.lit("to ")
	m.dst, m.dpt = splitAddrPort(c.word())
}

// asa106001 reads: Inbound TCP connection denied from a/p to a/p flags
// f on interface if.
func asa106001(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Inbound ")
	m.proto = c.word()
	c.lit("connection denied ")
	c.fromTo(m)
	c.lit("flags ")
	m.tcpFlags = trimBytes(c.until(" on interface "))
	m.srcIf = trimBytes(c.b)
	m.act, m.dir = wDeniedLower, wInbound
	return c.ok
}

// asa106002 reads: proto Connection denied by outbound list acl src a
// dest a.
func asa106002(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	m.proto = c.word()
	c.lit("Connection denied by outbound list ")
	m.acl = c.word()
	c.lit("src ")
	m.src = c.word()
	c.lit("dest ")
	m.dst = c.word()
	m.act, m.dir = wDeniedLower, wOutbound
	return c.ok
}

// asa106006 reads 106006 and 106007: Deny inbound UDP from a/p to a/p
// {on interface if | due to DNS {Response|Query}}.
func asa106006(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.dir = c.oneOf("inbound", "outbound")
	m.proto = c.word()
	c.fromTo(m)
	if bytes.HasPrefix(c.b, []byte("on interface ")) {
		c.lit("on interface ")
		m.srcIf = trimBytes(bytes.TrimSuffix(c.b, []byte(".")))
	} else if bytes.HasPrefix(c.b, []byte("due to ")) {
		m.reason = trimBytes(bytes.TrimSuffix(c.b[len("due to "):], []byte(".")))
	}
	m.act = wDeny
	return c.ok
}

// asa106010 reads: Deny {inbound|outbound} proto src if:a/p dst if:a/p.
func asa106010(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.dir = c.oneOf("inbound", "outbound")
	m.proto = c.word()
	c.lit("src ")
	s := c.until(" dst ")
	d := c.b
	if !c.ok {
		return false
	}
	var ok1, ok2 bool
	m.srcIf, m.src, m.spt, ok1 = splitIfAddr(trimBytes(s))
	m.dstIf, m.dst, m.dpt, ok2 = splitIfAddr(firstWord(d))
	m.act = wDeny
	return ok1 && ok2
}

// asa106014 reads: Deny {inbound|outbound} icmp src if:a [(user)] dst if:a
// [(user)] (type t, code c).
func asa106014(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.dir = c.oneOf("inbound", "outbound")
	m.proto = c.word()
	c.lit("src ")
	s := c.until(" dst ")
	if !c.ok {
		return false
	}
	d := c.b
	if i := bytes.Index(d, []byte("(type ")); i >= 0 {
		tc := newCursor(d[i+len("(type "):])
		m.icmpType = bytes.TrimSuffix(tc.word(), []byte(","))
		tc.lit("code ")
		m.icmpCode = bytes.TrimSuffix(tc.word(), []byte(")"))
		d = d[:i]
	}
	var ok1, ok2 bool
	m.srcIf, m.src, _, _, _, m.suser, ok1 = side(s)
	m.dstIf, m.dst, _, _, _, m.duser, ok2 = side(d)
	m.act = wDeny
	return ok1 && ok2
}

// asa106015 reads: Deny TCP (no connection) from a/p to a/p flags f on
// interface if.
func asa106015(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.proto = c.word()
	c.lit("(no connection) ")
	c.fromTo(m)
	c.lit("flags ")
	m.tcpFlags = trimBytes(c.until(" on interface "))
	m.srcIf = trimBytes(c.b)
	m.act = wDeny
	return c.ok
}

// asa106021 reads: Deny proto reverse path check from a to a on interface
// if.
func asa106021(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.proto = c.word()
	c.lit("reverse path check from ")
	m.src = c.word()
	c.lit("to ")
	m.dst = c.word()
	c.lit("on interface ")
	m.srcIf = trimBytes(c.b)
	m.act, m.reason = wDeny, wReversePath
	return c.ok
}

// asa106023 reads: Deny proto src if:a[/p] [(user)] dst if:a[/p] [(user)]
// [(type t, code c)] by access-group "acl" [0x..., 0x...].
func asa106023(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Deny ")
	m.proto = c.word()
	c.lit("src ")
	s := c.until(" dst ")
	d := c.until(" by access-group ")
	if !c.ok {
		return false
	}
	if i := bytes.Index(d, []byte("(type ")); i >= 0 {
		tc := newCursor(d[i+len("(type "):])
		m.icmpType = bytes.TrimSuffix(tc.word(), []byte(","))
		tc.lit("code ")
		m.icmpCode = bytes.TrimSuffix(tc.word(), []byte(")"))
		d = d[:i]
	}
	acl := c.word()
	m.acl = bytes.Trim(acl, `"`)
	var ok1, ok2 bool
	m.srcIf, m.src, m.spt, _, _, m.suser, ok1 = side(s)
	m.dstIf, m.dst, m.dpt, _, _, m.duser, ok2 = side(d)
	m.act = wDeny
	return ok1 && ok2
}

// asa106100 reads: access-list acl {permitted|denied|est-allowed} proto
// if/a(p) [(user)] -> if/a(p) [(user)] hit-cnt n {first hit|n-second
// interval} [0x..., 0x...].
func asa106100(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("access-list ")
	m.acl = c.word()
	m.act = c.oneOf("permitted", "denied", "est-allowed")
	m.proto = c.word()
	s := c.until(" -> ")
	d := c.until(" hit-cnt ")
	m.cnt = c.word()
	if !c.ok {
		return false
	}
	var ok1, ok2 bool
	m.srcIf, m.src, m.spt, ok1 = aclEndpoint(s)
	m.dstIf, m.dst, m.dpt, ok2 = aclEndpoint(d)
	return ok1 && ok2
}

// aclEndpoint reads "if/addr(port)" [(user)].
func aclEndpoint(b []byte) (ifc, addr, port []byte, ok bool) {
	b = trimBytes(b)
	i := bytes.IndexByte(b, '/')
	j := bytes.IndexByte(b, '(')
	if i <= 0 || j < i {
		return nil, nil, nil, false
	}
	k := bytes.IndexByte(b[j:], ')')
	if k < 0 {
		return nil, nil, nil, false
	}
	return b[:i], b[i+1 : j], b[j+1 : j+k], true
}

// asaXlate reads 305011 and 305012: {Built|Teardown} {dynamic|static}
// proto translation from if[(acl)]:a/p [(user)] to if:a/p [duration t].
func asaXlate(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	m.act = c.oneOf("Built", "Teardown")
	m.translation = c.oneOf("dynamic", "static")
	m.proto = c.word()
	c.lit("translation from ")
	s := c.until(" to ")
	if !c.ok {
		return false
	}
	d := c.b
	if i := bytes.Index(d, []byte(" duration ")); i >= 0 {
		m.duration = firstWord(d[i+len(" duration "):])
		d = d[:i]
	}
	var ok1, ok2 bool
	s = trimBytes(s)
	if i := bytes.IndexByte(s, '('); i > 0 && i < bytes.IndexByte(s, ':') {
		// "inside(acl-name):10.0.0.5/51234": the ACL of a policy NAT.
		j := bytes.IndexByte(s[i:], ')')
		if j < 0 || i+j+1 >= len(s) || s[i+j+1] != ':' {
			return false
		}
		m.acl, m.srcIf = s[i+1:i+j], s[:i]
		var ep []byte
		ep, _, _, m.suser = groups(s[i+j+2:])
		m.src, m.spt = splitAddrPort(ep)
		ok1 = len(m.src) > 0
	} else {
		m.srcIf, m.src, m.spt, _, _, m.suser, ok1 = side(s)
	}
	m.dstIf, m.srcNAT, m.srcNATPort, _, _, _, ok2 = side(d)
	return ok1 && ok2
}

// asa313001 reads: Denied ICMP type=t, code=c from a on interface if.
func asa313001(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Denied ")
	m.proto = c.word()
	c.lit("type=")
	m.icmpType = c.until(", code=")
	m.icmpCode = c.until(" from ")
	m.src = c.word()
	c.lit("on interface ")
	m.srcIf = trimBytes(c.b)
	m.act = wDenied
	return c.ok
}

// asa313004 reads: Denied ICMP type=t, from a on interface if to a:no
// matching session.
func asa313004(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("Denied ")
	m.proto = c.word()
	c.lit("type=")
	m.icmpType = c.until(", from ")
	m.src = c.word()
	c.lit("on interface ")
	m.srcIf = c.until(" to ")
	m.dst = c.until(":")
	m.reason = trimBytes(c.b)
	m.act = wDenied
	return c.ok
}

// asa7100xx reads 710002, 710003 and 710005: proto {access permitted|
// access denied by ACL|request discarded} from a/p to if:a/service.
func asa7100xx(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	m.proto = c.word()
	switch {
	case bytes.HasPrefix(c.b, []byte("access permitted ")):
		c.lit("access permitted ")
		m.act = wPermitted
	case bytes.HasPrefix(c.b, []byte("access denied by ACL ")):
		c.lit("access denied by ACL ")
		m.act = wDeniedLower
	default:
		c.lit("request discarded ")
		m.act = wDiscarded
	}
	c.lit("from ")
	m.src, m.spt = splitAddrPort(c.word())
	c.lit("to ")
	if !c.ok {
		return false
	}
	// The interface is the one the packet came in on, the ASA's own
	// address on it the destination.
	var ok bool
	m.srcIf, m.dst, m.dpt, ok = splitIfAddr(firstWord(c.b))
	return ok
}

// asa733100 reads: [obj] drop rate-id exceeded. Current burst rate is n per
// second, max configured rate is n; Current average rate is n per second,
// max configured rate is n; Cumulative total count is n.
func asa733100(m *asaMsg, t []byte) bool {
	c := newCursor(t)
	c.lit("[")
	m.object = trimBytes(c.until("]"))
	c.lit(" drop ")
	m.rateID = c.word()
	c.lit("exceeded.")
	c.until("Cumulative total count is ")
	m.cnt = bytes.TrimSuffix(trimBytes(c.b), []byte("."))
	m.act = wDropRate
	return c.ok && len(m.object) > 0
}

// firstWord returns b up to its first space.
func firstWord(b []byte) []byte {
	b = trimBytes(b)
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i]
	}
	return b
}
