package kafka

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The offsets of a Consumer: which records are finished, and committing
// them, in order, per partition.
//
// After each Push the consumer appends a mark to the partition: the offset
// after the chunk's last record and the Ack of its events. Marks settle in
// order: a mark is ready only when its Ack and every Ack before it report
// finished, and the newest ready mark is what a commit writes. Records
// that did not decode (dead-lettered) are covered by the next mark, or by
// a mark without an Ack when they end a fetch.
//
// An Ack that reports an error stalls the partition: Kafka offsets are
// positional, so committing a later record would commit this one too. The
// partition keeps its last ready offset (committed at the next commit) and
// takes no more marks until it is revoked or lost; its next owner reads
// again from there.

type topicPart struct {
	topic string
	part  int32
}

// partMark says: the records of a partition before offset next are
// finished once ack is (and every mark before it). A nil ack is finished.
type partMark struct {
	next  int64
	epoch int32
	ack   Ack
}

// partState is one partition's offsets; guarded by Consumer.mu.
type partState struct {
	shard     uint64
	pending   []partMark
	ready     kgo.EpochOffset // finished, to commit; Offset -1 when none
	committed int64           // next offset committed (at first: the first polled)
	polled    int64           // offset after the last record polled
	hw        int64           // high watermark of the last fetch
	stalled   bool
}

// stallNote is a partition that stalled, reported once c.mu is released.
type stallNote struct {
	tp     topicPart
	offset int64
	err    error
}

// state returns the partition's state, creating it at the first fetch of
// an assignment (first: the offset of its first record).
func (c *Consumer) state(topic string, part int32, first int64) *partState {
	tp := topicPart{topic, part}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.parts[tp]
	if st == nil {
		st = &partState{shard: shardOf(topic, part), ready: kgo.EpochOffset{Offset: -1}, committed: first, polled: first}
		c.parts[tp] = st
	}
	return st
}

// advance moves the partition's settled marks to ready, in order, and
// returns a note when an Ack reported an error (the partition stalls
// now). Called with c.mu held.
func (c *Consumer) advance(tp topicPart, st *partState) *stallNote {
	n := 0
	var note *stallNote
	for n < len(st.pending) {
		m := st.pending[n]
		if m.ack != nil {
			ok, err := m.ack.Done()
			if !ok {
				break
			}
			if err != nil {
				st.stalled = true
				c.stalls.Add(1)
				note = &stallNote{tp: tp, offset: max(st.ready.Offset, st.committed), err: err}
				n = len(st.pending)
				break
			}
		}
		st.ready = kgo.EpochOffset{Epoch: m.epoch, Offset: m.next}
		n++
	}
	if n > 0 {
		clear(st.pending[:n]) // drop the Acks
		st.pending = append(st.pending[:0], st.pending[n:]...)
	}
	return note
}

// report logs stalled partitions and calls the hook, without c.mu.
func (c *Consumer) report(notes []stallNote) {
	for _, n := range notes {
		c.log.Error("kafka: events not finished: the partition stops committing until it is reassigned; its next owner reads again from the offset",
			"consumer", c.name, "topic", n.tp.topic, "partition", n.tp.part, "offset", n.offset, "err", n.err)
		if h := c.cfg.Hooks.OnStalled; h != nil {
			h(n.tp.topic, n.tp.part, n.offset, n.err)
		}
	}
}

// commit commits the finished offsets of the partitions in only (every
// partition when only is nil) and returns the first error.
func (c *Consumer) commit(ctx context.Context, only map[string][]int32) error {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	var notes []stallNote
	c.mu.Lock()
	for tp, st := range c.parts {
		if only != nil && !slices.Contains(only[tp.topic], tp.part) {
			continue
		}
		if n := c.advance(tp, st); n != nil {
			notes = append(notes, *n)
		}
		if st.ready.Offset > st.committed {
			if offsets[tp.topic] == nil {
				offsets[tp.topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[tp.topic][tp.part] = st.ready
		}
	}
	c.mu.Unlock()
	c.report(notes)
	if len(offsets) == 0 {
		return nil
	}
	var errs []error
	c.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					errs = append(errs, err)
					continue
				}
				if st := c.parts[topicPart{t.Topic, p.Partition}]; st != nil {
					st.committed = max(st.committed, offsets[t.Topic][p.Partition].Offset)
				}
			}
		}
		c.commits.Add(1)
	})
	for _, err := range errs {
		if c.commitErrors.Add(1)%20 == 1 && !errors.Is(err, context.Canceled) {
			c.log.Warn("kafka: offset commit failed (retried next interval)", "consumer", c.name, "err", err)
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// onAssigned counts the partitions given to this member.
func (c *Consumer) onAssigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	c.assigned.Add(count(m))
}

// onRevoked runs when partitions leave this member (a rebalance, or
// leaving the group when Serve ends): it waits until the records already
// pushed from them have finished, commits them, and forgets the
// partitions. What does not finish in time (hard ended, or RevokeTimeout
// passed) is not committed and is read again by the next owner. After
// Close it neither waits nor commits.
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	c.revokes.Add(1)
	defer c.forget(revoked)
	if c.aborted.Load() {
		return
	}
	if left := c.waitFinished(ctx, revoked); left > 0 && !c.aborted.Load() {
		c.log.Warn("kafka: revocation stopped waiting for in-flight records; they are not committed and will be read again",
			"consumer", c.name, "partitions", left)
	}
	if c.aborted.Load() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalCommitTimeout)
	defer cancel()
	_ = c.commit(cctx, revoked)
}

// waitFinished waits until every mark of the partitions in ps has settled
// (a stalled partition waits for nothing), hard ends, RevokeTimeout
// passes, ctx ends or Close is called. It returns how many partitions
// still had marks in flight.
func (c *Consumer) waitFinished(ctx context.Context, ps map[string][]int32) int {
	var hardDone <-chan struct{}
	if h := c.hard.Load(); h != nil {
		hardDone = (*h).Done()
	}
	limit := time.NewTimer(c.cfg.RevokeTimeout)
	defer limit.Stop()
	tick := time.NewTicker(revokePoll)
	defer tick.Stop()
	for {
		var notes []stallNote
		left := 0
		c.mu.Lock()
		for tp, st := range c.parts {
			if !slices.Contains(ps[tp.topic], tp.part) {
				continue
			}
			if n := c.advance(tp, st); n != nil {
				notes = append(notes, *n)
			}
			if !st.stalled && len(st.pending) > 0 {
				left++
			}
		}
		c.mu.Unlock()
		c.report(notes)
		if left == 0 || c.aborted.Load() {
			return left
		}
		select {
		case <-tick.C:
		case <-hardDone:
			return left
		case <-limit.C:
			return left
		case <-ctx.Done():
			return left
		}
	}
}

// onLost forgets partitions the group took away without a revocation
// (the session expired): this member can no longer commit their offsets.
func (c *Consumer) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.lost.Add(1)
	c.forget(lost)
}

// forget drops the state of the partitions in ps.
func (c *Consumer) forget(ps map[string][]int32) {
	c.mu.Lock()
	for t, parts := range ps {
		for _, p := range parts {
			delete(c.parts, topicPart{t, p})
		}
	}
	c.mu.Unlock()
	c.assigned.Add(-count(ps))
}

func count(m map[string][]int32) int64 {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return int64(n)
}
