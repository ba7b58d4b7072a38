package sources

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"
	"unsafe"
)

// shardBits is log2 of the number of shards of the key table.
const shardBits = 6

// nshards is the number of shards: enough that new keys on different
// cores rarely meet on one lock, few enough that a scan stays cheap.
const nshards = 1 << shardBits

// tombstone marks a slot whose entry was removed; lookups probe past it.
var tombstone = new(entry)

// table is an open-addressing hash table (linear probing) of entries,
// read without locks: a slot's pointer is loaded atomically and an
// entry's key and hash never change. It always has a nil slot, so a probe
// ends. A table is never resized in place: a shard builds a new one and
// publishes it.
type table struct {
	mask  uint64
	slots []atomic.Pointer[entry]
}

func newTable(size int) *table {
	return &table{mask: uint64(size - 1), slots: make([]atomic.Pointer[entry], size)}
}

// shard is one part of the key table: lookups read its table without
// locking; insertions, removals and scans take mu. Padded so that two
// shards' hot words never share a cache line (nor its adjacent-line
// prefetch pair).
type shard struct {
	tab  atomic.Pointer[table]
	mu   sync.Mutex
	live int // entries in the table; under mu
	used int // live entries and tombstones; under mu
	_    [128 - 8 - 8 - 16]byte
}

func (s *shard) init() { s.tab.Store(newTable(8)) }

// findAddr returns the entry of address a (hash h), or nil. Lock-free.
func (s *shard) findAddr(h uint64, a netip.Addr) *entry {
	t := s.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.hash == h && !e.key.isHost && e.key.addr == a {
			return e
		}
	}
}

// findHost returns the entry of host b (hash h), or nil. Lock-free; does
// not allocate.
func (s *shard) findHost(h uint64, b []byte) *entry {
	t := s.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.hash == h && e.key.isHost && e.key.host == string(b) {
			return e
		}
	}
}

// find returns the entry of k (hash h), or nil. Lock-free.
func (s *shard) find(h uint64, k Key) *entry {
	t := s.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.hash == h && e.key == k {
			return e
		}
	}
}

// put adds e, whose key is not in the table; the caller holds mu. The
// table is rebuilt first when live entries and tombstones would fill more
// than 3/4 of it, at twice the live entries' need (so tombstones left by
// evictions are dropped, and the cost is amortised over the insertions
// that made them).
func (s *shard) put(e *entry) {
	t := s.tab.Load()
	if (s.used+1)*4 > len(t.slots)*3 {
		size := 8
		for (s.live+1)*2 > size {
			size *= 2
		}
		nt := newTable(size)
		for i := range t.slots {
			if old := t.slots[i].Load(); old != nil && old != tombstone {
				place(nt, old)
			}
		}
		s.tab.Store(nt)
		t = nt
		s.used = s.live
	}
	if !place(t, e) {
		s.used++ // took a nil slot, not a tombstone
	}
	s.live++
}

// place stores e in the first free slot (nil or tombstone) of its probe
// sequence and reports whether that slot held a tombstone.
func place(t *table, e *entry) bool {
	for i := e.hash & t.mask; ; i = (i + 1) & t.mask {
		old := t.slots[i].Load()
		if old == nil || old == tombstone {
			t.slots[i].Store(e)
			return old == tombstone
		}
	}
}

// del removes e if it is in the table and reports whether it was; the
// caller holds mu.
func (s *shard) del(e *entry) bool {
	t := s.tab.Load()
	for i := e.hash & t.mask; ; i = (i + 1) & t.mask {
		old := t.slots[i].Load()
		switch old {
		case nil:
			return false
		case e:
			t.slots[i].Store(tombstone)
			s.live--
			return true
		}
	}
}

// each calls f for every entry; the caller holds mu.
func (s *shard) each(f func(e *entry)) {
	t := s.tab.Load()
	for i := range t.slots {
		if e := t.slots[i].Load(); e != nil && e != tombstone {
			f(e)
		}
	}
}

// hashAddr returns the hash of address a (its zone left out): a multiply
// and fold of the address's bits with the tracker's random keys, the mix
// of wyhash, so that a sender cannot choose addresses that collide.
func (t *Tracker) hashAddr(a netip.Addr) uint64 {
	if a.Is4() {
		b := a.As4()
		return mum(uint64(binary.LittleEndian.Uint32(b[:]))^t.k0, t.k1)
	}
	b := a.As16()
	return mum(binary.LittleEndian.Uint64(b[:8])^t.k0, binary.LittleEndian.Uint64(b[8:])^t.k1)
}

// mum folds the 128-bit product of a and b.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hashHost returns the hash of host b.
func (t *Tracker) hashHost(b []byte) uint64 { return hashText(t.k0, t.k1, b) }

// hashText is the hash of host keys: the mum mix of hashAddr over the
// text's 16-byte blocks (the last one overlapping the block before, as
// wyhash reads it), keyed like it with the tracker's random keys, so that
// a sender cannot choose hosts that collide. For the short texts host
// names are it costs less than hash/maphash's call: one multiplication
// per 16 bytes, and no call.
func hashText(k0, k1 uint64, b []byte) uint64 {
	n := len(b)
	h := k0 ^ uint64(n)*0x9E3779B97F4A7C15
	var w0, w1 uint64
	switch {
	case n > 16:
		for p := b; len(p) > 16; p = p[16:] {
			h = mum(binary.LittleEndian.Uint64(p[:8])^h, binary.LittleEndian.Uint64(p[8:16])^k1)
		}
		t := b[n-16:]
		w0, w1 = binary.LittleEndian.Uint64(t[:8]), binary.LittleEndian.Uint64(t[8:16])
	case n >= 8:
		t := b[n-8:]
		w0, w1 = binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(t[:8])
	case n >= 4:
		t := b[n-4:]
		w0 = uint64(binary.LittleEndian.Uint32(b[:4]))<<32 | uint64(binary.LittleEndian.Uint32(t[:4]))
	case n > 0:
		w0 = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mum(w0^h, w1^k1)
}

// textBytes returns the bytes of s, which the caller must not modify:
// s hashed and compared as bytes without a copy.
func textBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// hashKey returns the hash of k, the same as hashAddr or hashHost.
func (t *Tracker) hashKey(k Key) uint64 {
	if k.isHost {
		return hashText(t.k0, t.k1, textBytes(k.host))
	}
	return t.hashAddr(k.addr)
}

// shardOf returns the shard of hash h (its top bits; slots use the low
// ones).
func (t *Tracker) shardOf(h uint64) *shard { return &t.shards[h>>(64-shardBits)] }
