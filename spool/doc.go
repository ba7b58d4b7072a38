// Package spool is a disk queue of batches of events, or of the requests a
// destination will receive: segment files of checksummed records with one
// head, written by a write-ahead user, acknowledged after delivery, and
// read back only after a restart or when memory had to let a copy go.
// Package delivery builds its durable queue on it; it is usable on its own.
//
// A [Spool] is a disk queue of batches with one head: [Spool.Append] adds
// a batch as a record at the tail and returns its [RecordID];
// [Spool.Peek] reads the record at the head, the oldest not yet
// acknowledged; [Spool.Ack] acknowledges records up to one, moving the head
// past them. A write-ahead user (package delivery) appends each batch,
// sends its own copy from memory and acknowledges the record once the
// destination took it, so the disk is only written, never read, unless the
// process restarts with records unacknowledged or memory had to let copies
// go. [Spool.Replay] is the loop of Peek, a callback and Ack.
//
// # Format
//
// The format is versioned; this is version 4. A spool is a directory of
// segment files named by a 20-digit sequence number
// (00000000000000000001.seg, ...), a head file and a lock file. A segment
// starts with the 8-byte magic "RKSPOOL4" and holds records; a record is
// one batch, a 28-byte header and a payload (integers little endian):
//
//	marker    "RKR4"     4 bytes, where a reader resynchronises after damage
//	length    uint32     payload length in bytes
//	events    uint32     events in the record
//	appended  int64      append time, unix ns
//	crc       uint32     CRC-32C (Castagnoli) of the payload
//	hcrc      uint32     CRC-32C of the 24 header bytes before it
//	payload              a kind byte, then:
//	  'E' (events, [Spool.Append]): uvarint event count, varint append
//	      time, then per event: varint ReceiveTime, varint Time, byte
//	      Priority, uvarint Flags, then Host, Source, SourceType, Index,
//	      Raw as uvarint length + bytes, then uvarint field count and each
//	      key and value as uvarint length + bytes
//	  'R' (requests, [Spool.AppendRequests]): uvarint request count, then
//	      per request: Format as uvarint length + bytes, uvarint Events,
//	      varint OldestReceive, varint NewestReceive, then Index and Body
//	      as uvarint length + bytes
//
// A record of requests holds the [relaykit.Request] values a
// [relaykit.RequestSink] encoded from one batch: the bodies its
// destination receives, compressed as sent, so that the spool takes about
// the bytes the wire does, and a reader sends them without decoding them.
// The header's event count is the sum of their Events.
//
// A new segment starts when the current one would exceed
// [Config.SegmentBytes]. The head file holds two 32-byte slots
// ("RKH3", a generation, the head's segment and offset, a CRC-32C), written
// alternately in place after each acknowledgement; the valid slot with the
// higher generation wins, so a torn write costs one acknowledgement, not
// the head. Segments whose records are all acknowledged are removed (the
// head is saved first); the write segment is kept and reused, and its
// acknowledged bytes are reclaimed when the spool or the disk is full and
// nothing is left to read. The lock file holds an flock(2) while a Spool
// has the directory open, so a second process, or a second Spool in this
// one, gets [ErrLocked] instead of corrupting the first.
//
// # Upgrades
//
// Segments of earlier versions are read after an upgrade, and new records
// always go to a segment of the current version (the newest old segment
// is sealed): nothing written by an earlier release is lost. Version 3
// ("RKSPOOL3", records marked "RKR3") has the same header and, as its
// payload, the events of version 4's 'E' records without the kind byte;
// version 2 ("RKSPOOL2", records of an 8-byte header: length and CRC, and
// a "position" file in place of the head file) has the same payload and
// cannot be resynchronised after damage. An earlier release cannot read a
// version 4 segment: a downgrade must first drain the spool.
//
// # Crash semantics
//
// Append writes each record with one pwrite(2) and returns after it; with
// the default policy that is the durability point: a batch whose Append
// returned nil is in the page cache and survives kill -9 of the process
// (the kernel owns the data), but not a power loss or a kernel crash. Set
// [Config.Fsync] to fsync the segment on every Append (and the head
// file on every Ack) to survive those too, at the cost of a disk flush per
// call.
//
// If the process dies during an Append, the last record may be incomplete
// (that Append had not returned). [Open] scans the newest segment and
// cuts what follows its last valid record ([Stats].TornBytes). A
// record is acknowledged only when Ack is called; if the process dies
// before the head file is written, that record is read again after a
// restart. So delivery is at least once; nothing acknowledged by Append is
// lost to a crash.
//
// # Disk errors and damage
//
// Errors are never sticky. A failed write (ENOSPC, EIO) or segment
// creation fails that Append alone and leaves nothing behind: a partial
// record is cut again, or, if even that fails, the segment is sealed and
// the next Append starts a new one. A failed fsync returns the record's ID
// with the error (the record was written but may not survive a power loss)
// and seals the segment, since Linux may forget a failed page's error
// state. A failed read is returned and retried; the third failure in a row
// at the same record skips it as damaged. A failed head write is counted
// and returned by Ack, whose acknowledgement still holds in memory.
//
// Damage on disk costs what it touched, and the spool counts it
// ([Stats] Corrupt, CorruptBytes, LostEvents, TornBytes,
// MissingSegments):
//
//   - a record whose payload checksum fails (a flipped bit, a zeroed page)
//     costs that record; its events are known from the header and counted
//     in LostEvents;
//   - a damaged header, or a run of bytes that is no record, costs the
//     records it covers: the reader scans for the next marker and accepts
//     it only if the header and payload checksums agree; the events of a
//     destroyed header are unknown (CorruptBytes says how much);
//   - a truncated sealed segment costs the records past the cut; a torn
//     tail of the newest segment is cut at open;
//   - a missing or unreadable segment file costs that segment
//     (MissingSegments; its events are in LostEvents when it vanished
//     while the spool was open, unknown otherwise);
//   - a lost head file (both slots damaged) costs nothing but duplicates:
//     reading starts again at the oldest segment.
//
// When the spool holds [Config.MaxBytes], Append refuses new batches
// with [ErrFull] and writes nothing: the caller counts them, waits for
// room, or calls [Spool.Discard] to drop the oldest segment's records
// (without waiting for a Peek in progress). Unread data is never
// overwritten silently.
//
// The spool knows its backlog ([Stats] Batches, Events and Oldest):
// every record header carries its event count and append time, and
// [Open] reads them, so a restarted process knows exactly what an
// earlier one left.
//
// A Spool works on an [FS]; package spooltest wraps one to inject disk
// faults, and damages files as disks do, for tests of code built on it.
//
// # Concurrency
//
// A [Spool] is safe for concurrent use by multiple goroutines and runs no
// goroutine of its own. Only one Spool may use a directory at a time: the
// lock file holds an flock(2) (a second Open gets [ErrLocked]).
package spool
