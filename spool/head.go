package spool

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
)

// The head file records the oldest unacknowledged record. It holds two
// 32-byte slots written alternately in place (pwrite, no rename):
//
//	slot = "RKH3" gen:uint64 segment:uint64 offset:int64 crc:uint32
//
// crc is CRC-32C of the 28 bytes before it. A reader takes the valid slot
// with the higher gen, so a write torn by a crash leaves the other slot,
// one acknowledgement older: that record is delivered again, never lost.
const (
	headFile  = "head"
	headMagic = "RKH3"
	headSlot  = 32
	// posFileV2 is the position file of version 2 spools, read once at
	// open and replaced by the head file.
	posFileV2  = "position"
	posMagicV2 = "RKPOS001"
	posSizeV2  = len(posMagicV2) + 8 + 8 + 4
)

// readHead returns the newest valid slot of the head file.
func (s *Spool) readHead() (id RecordID, gen uint64, ok bool) {
	f, err := s.fs.OpenFile(filepath.Join(s.cfg.Dir, headFile), os.O_RDONLY, 0)
	if err != nil {
		return RecordID{}, 0, false
	}
	defer f.Close()
	var b [2 * headSlot]byte
	n, _ := f.ReadAt(b[:], 0)
	for i := 0; i+headSlot <= n; i += headSlot {
		slot := b[i : i+headSlot]
		if string(slot[:4]) != headMagic || crc32.Checksum(slot[:28], castagnoli) != binary.LittleEndian.Uint32(slot[28:]) {
			continue
		}
		g := binary.LittleEndian.Uint64(slot[4:])
		if !ok || g > gen {
			gen, ok = g, true
			id = RecordID{seg: binary.LittleEndian.Uint64(slot[12:]), off: int64(binary.LittleEndian.Uint64(slot[20:]))}
		}
	}
	return id, gen, ok
}

// readPositionV2 reads the position file of a version 2 spool.
func (s *Spool) readPositionV2() (RecordID, bool) {
	f, err := s.fs.OpenFile(filepath.Join(s.cfg.Dir, posFileV2), os.O_RDONLY, 0)
	if err != nil {
		return RecordID{}, false
	}
	defer f.Close()
	var b [posSizeV2]byte
	if n, _ := f.ReadAt(b[:], 0); n != posSizeV2 || string(b[:len(posMagicV2)]) != posMagicV2 {
		return RecordID{}, false
	}
	body := b[:posSizeV2-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[posSizeV2-4:]) {
		return RecordID{}, false
	}
	return RecordID{
		seg: binary.LittleEndian.Uint64(b[len(posMagicV2):]),
		off: max(int64(binary.LittleEndian.Uint64(b[len(posMagicV2)+8:])), segHeader),
	}, true
}

// writeHeadLocked saves s.head in the next slot of the head file (and
// fsyncs it with Fsync). s.mu is held. A failure is counted and returned:
// the head in memory is right, but a crash before the next successful
// write would deliver the records since the last one again.
func (s *Spool) writeHeadLocked() error {
	if s.headF == nil {
		f, err := s.fs.OpenFile(filepath.Join(s.cfg.Dir, headFile), os.O_RDWR|os.O_CREATE, s.cfg.FileMode)
		if err != nil {
			s.headErrors.Add(1)
			return spoolErr("write head", err)
		}
		s.headF = f
	}
	s.headGen++
	b := s.headBuf[:]
	copy(b, headMagic)
	binary.LittleEndian.PutUint64(b[4:], s.headGen)
	binary.LittleEndian.PutUint64(b[12:], s.head.seg)
	binary.LittleEndian.PutUint64(b[20:], uint64(s.head.off))
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	_, err := s.headF.WriteAt(b, int64(s.headGen%2)*headSlot)
	if err == nil && s.cfg.Fsync {
		err = s.headF.Sync()
	}
	if err != nil {
		s.headErrors.Add(1)
		// Reopen next time: the descriptor may be what failed.
		_ = s.headF.Close()
		s.headF = nil
		return spoolErr("write head", err)
	}
	return nil
}
