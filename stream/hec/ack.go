package hec

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fastjson"
)

// ackState holds the ackIds of every channel: issued (false until the
// Sink accepted the batch, then true) and not yet reported true to the
// sender. Bounded by MaxPendingAcks per channel and MaxAckChannels; idle
// channels are dropped, lazily, by the requests that look at the state
// (no goroutine of its own).
type ackState struct {
	cfg *Config

	mu        sync.Mutex
	chans     map[string]*ackChannel
	lastSweep int64
	pending   int64
	accepted  int64
	failed    int64
	expired   int64
}

type ackChannel struct {
	name     string
	next     int64
	pending  map[int64]bool // ackId -> accepted
	inflight int            // ids whose Send has not returned
	last     int64          // last use, ns since epoch
	dead     bool           // dropped as idle
}

func (a *ackState) init(cfg *Config) {
	a.cfg = cfg
	a.chans = make(map[string]*ackChannel)
}

func (a *ackState) stats(s *Stats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.AcksPending, s.AckChannels = a.pending, int64(len(a.chans))
	s.AcksAccepted, s.AcksFailed, s.AcksExpired = a.accepted, a.failed, a.expired
}

// sweepLocked drops channels idle for AckChannelIdle (none with a Send in
// flight), at most four times per AckChannelIdle. a.mu is held.
func (a *ackState) sweepLocked(now int64, force bool) {
	idle := int64(a.cfg.AckChannelIdle)
	if !force && now-a.lastSweep < idle/4 {
		return
	}
	a.lastSweep = now
	for name, c := range a.chans {
		if c.inflight == 0 && now-c.last >= idle {
			c.dead = true
			a.expired += int64(len(c.pending))
			a.pending -= int64(len(c.pending))
			delete(a.chans, name)
		}
	}
}

// issue returns a new ackId on channel ch, or false when a limit is
// reached (the request is then answered server busy).
func (a *ackState) issue(ch string) (*ackChannel, int64, bool) {
	now := a.cfg.Clock.Nano()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweepLocked(now, false)
	c := a.chans[ch]
	if c == nil {
		if len(a.chans) >= a.cfg.MaxAckChannels {
			a.sweepLocked(now, true)
			if len(a.chans) >= a.cfg.MaxAckChannels {
				return nil, 0, false
			}
		}
		c = &ackChannel{name: ch, pending: make(map[int64]bool)}
		a.chans[ch] = c
	}
	c.last = now
	if len(c.pending) >= a.cfg.MaxPendingAcks {
		return nil, 0, false
	}
	id := c.next
	c.next++
	c.pending[id] = false
	c.inflight++
	a.pending++
	return c, id, true
}

// done records the outcome of the Send of ackId id.
func (a *ackState) done(c *ackChannel, id int64, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c.inflight--
	if ok {
		a.accepted++
	} else {
		a.failed++
	}
	if c.dead {
		return
	}
	if ok {
		c.pending[id] = true
		return
	}
	// A refused batch is never acknowledged: forget its id (it answers
	// false), so the sender's timeout sends it again.
	delete(c.pending, id)
	a.pending--
}

// query appends {"acks":{"id":bool,...}} for ids to dst; an id reported
// true is forgotten, as HEC does.
func (a *ackState) query(dst []byte, ch string, ids []int64) []byte {
	now := a.cfg.Clock.Nano()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweepLocked(now, false)
	c := a.chans[ch]
	if c != nil {
		c.last = now
	}
	dst = append(dst, `{"acks":{`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, id, 10)
		ok := c != nil && c.pending[id]
		if ok {
			delete(c.pending, id)
			a.pending--
			dst = append(dst, `":true`...)
		} else {
			dst = append(dst, `":false`...)
		}
	}
	return append(dst, "}}"...)
}

// sendAcked answers an acknowledged request with an ackId at once and
// sends its batch in the background, owning st from then on.
func (h *Handler) sendAcked(w http.ResponseWriter, r *http.Request, st *reqState, ch string, handedOff *bool) int {
	// A slot first, so that a busy answer burns no ackId.
	select {
	case h.sem <- struct{}{}:
	default:
		t := time.NewTimer(h.cfg.SendTimeout)
		select {
		case h.sem <- struct{}{}:
			t.Stop()
		case <-t.C:
			return h.busy(w, st)
		case <-r.Context().Done():
			t.Stop()
			return h.busy(w, st)
		}
	}
	c, id, ok := h.acks.issue(ch)
	if !ok {
		<-h.sem
		h.cfg.Logger.Warn("hec: ack state limit reached, answering server busy", "channel", ch,
			"max_pending_acks", h.cfg.MaxPendingAcks, "max_ack_channels", h.cfg.MaxAckChannels)
		return h.busy(w, st)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.sem
		h.acks.done(c, id, false)
		return h.busy(w, st)
	}
	h.wg.Add(1)
	h.mu.Unlock()
	*handedOff = true
	// The answer is written before the goroutine starts: st.out is
	// the goroutine's afterwards.
	extra := strconv.AppendInt(append(make([]byte, 0, 32), `,"ackId":`...), id, 10)
	h.reply(w, st, CodeSuccess, extra)
	go func() {
		defer h.wg.Done()
		err := h.send(h.ctx, st, st.batch)
		h.acks.done(c, id, err == nil)
		<-h.sem
		h.put(st)
	}()
	return CodeSuccess
}

func (h *Handler) busy(w http.ResponseWriter, st *reqState) int {
	h.refused.Add(int64(len(st.batch)))
	h.reply(w, st, CodeServerBusy, nil)
	return CodeServerBusy
}

// serveAck answers /services/collector/ack: {"acks":[id,...]} ->
// {"acks":{"id":true|false,...}}.
func (h *Handler) serveAck(w http.ResponseWriter, r *http.Request) {
	st := h.get()
	defer h.put(st)
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = []string{http.MethodPost}
		replyStatus(w, http.StatusMethodNotAllowed, []byte("Method Not Allowed"))
		return
	}
	tok, code := h.auth(r)
	if code != CodeSuccess {
		h.reply(w, st, code, nil)
		return
	}
	if !tok.Ack {
		h.reply(w, st, CodeAckDisabled, nil)
		return
	}
	ch, code := channel(r, true)
	if code != CodeSuccess {
		h.reply(w, st, code, nil)
		return
	}
	h.ackQueries.Add(1)
	body, _, status := h.readBody(w, r, st)
	if status != 0 {
		return
	}
	ids, ok := parseAckIDs(st, body)
	if !ok {
		h.reply(w, st, CodeInvalidDataFormat, nil)
		return
	}
	st.out = h.acks.query(st.out[:0], ch, ids)
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(st.out)
}

var ackParsers fastjson.ParserPool

// parseAckIDs reads {"acks":[0,1,...]}: non-negative integers.
func parseAckIDs(st *reqState, body []byte) ([]int64, bool) {
	p := ackParsers.Get()
	defer ackParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, false
	}
	arr := v.Get("acks")
	if arr == nil || arr.Type() != fastjson.TypeArray {
		return nil, false
	}
	ids := make([]int64, 0, len(arr.GetArray()))
	for _, el := range arr.GetArray() {
		id, err := el.Int64()
		if err != nil || id < 0 {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// serveHealth answers /services/collector/health: 17, or 18 while
// Config.Health reports an error or the handler is closed.
func (h *Handler) serveHealth(w http.ResponseWriter) {
	st := h.get()
	defer h.put(st)
	code := CodeHealthy
	if h.isClosed() || h.cfg.Health != nil && h.cfg.Health() != nil {
		code = CodeUnhealthyQueuesFull
	}
	h.reply(w, st, code, nil)
}
