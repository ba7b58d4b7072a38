// Package storage writes events to disk: a rotating file [Writer], an
// [Archive] sink that writes every event as one line through it, and a
// [Spool], the disk queue that keeps batches a destination could not take
// until they can be replayed.
//
// # Writer: naming
//
// File names are the start of the rotation period formatted with
// [Config.Layout] in [Config.Location] ("relay-2006-01-02.log" gives
// relay-2026-11-22.log), followed by a sequence number when the period has
// more than one file:
//
//	relay-2026-11-22.log       first file of the period
//	relay-2026-11-22.log.1     after the first size rotation (or Rotate)
//	relay-2026-11-22.log.2     ...
//	relay-2026-11-23.log       next period
//
// Files are never renamed, only compressed (".gz" or ".zst" is appended),
// so the active file is always the newest: the highest sequence number of
// the latest period. To read files in write order, sort by the period time
// parsed from the name, then by the sequence number as a number (".10"
// comes after ".9"); [ListFiles] does that, and [OpenFile] reads a file
// whether compressed or not. When the layout is coarser than [Config.Interval]
// (a daily name with hourly periods), later periods of the same name
// continue its sequence numbers, so the order stays unambiguous.
//
// While a Writer runs, a hidden file named "." + Layout + ".next" holds
// the next file, created ahead of rotation; it is removed at Close.
//
// Names come only from the configuration and the clock; a Layout that is
// not a plain, safe file name is rejected. Use [SanitizeFileName] for any
// path part derived from event data.
//
// # Writer: rotation
//
// Before each Write, the Writer rotates when the period has ended or when
// the write would make the file exceed [Config.MaxBytes] (unless the file is
// empty: a record larger than MaxBytes gets a file of its own). One Write is
// never split across files. Periods are aligned to the wall clock: days
// start at midnight in Location, and with an Interval below 24h periods
// start at midnight and every Interval after it. The check reads a cached
// clock (github.com/agilira/go-timecache, 500 µs resolution) rather than
// calling time.Now per write; [Config.Now] replaces it in tests. The timer
// goroutine also rotates a non-empty file whose period ended while no write
// came, so an idle day's file is closed and compressed on time. At start the
// Writer appends to the newest file of the current period if it is
// uncompressed and below MaxBytes.
//
// Rotation is close, then link a file created ahead of time to the new name;
// creating files, fsync, compression and retention happen in background
// goroutines, off the write path.
//
// # Writer: retention and compression
//
// After each rotation and at start, rotated files beyond [Config.MaxFiles]
// (oldest first) and files last modified more than [Config.MaxAge] ago are
// removed; the active file never is. One background goroutine compresses
// rotated files (gzip or zstd, [Config.Compression]): it writes
// NAME.gz.tmp, fsyncs it, renames it to NAME.gz, fsyncs the directory, and
// only then removes NAME. A crash at any point leaves NAME, or a complete
// NAME.gz; a leftover .tmp is removed and NAME compressed again at the next
// start. Close waits for files already rotated to be compressed.
//
// # Writer: buffering, sync policy and durability
//
// Writes go to a buffer ([Config.BufferSize], 256 KiB) flushed when full,
// every [Config.FlushInterval] (1 s), and on Flush, Sync, Rotate and Close.
// Data still in the buffer is lost if the process dies; data flushed to the
// operating system survives a crash of the process (kill -9), and reaches
// the disk when the kernel writes it back. fsync(2) matters only for a crash
// of the machine or a power loss: [SyncOnRotate] (the default) fsyncs each
// file once it is rotated (in the background) and at Close, [SyncInterval]
// also after every timed flush, [SyncNone] never; [Writer.Sync] fsyncs on
// demand, and concurrent calls share one fsync (group commit).
//
// Errors are not sticky. A failed write leaves nothing of itself in the
// file (a partial write is cut again) and fails that Write alone; buffered
// data whose flush failed stays buffered for the next flush. A full disk
// (ENOSPC, EDQUOT) keeps the file; any other error, or a cut that fails,
// or a failed fsync (after which Linux may forget the failed pages' error
// state), closes it, and the next Write starts the next file of the
// period. [Stats] counts WriteErrors and the TornBytes that could not be
// cut.
//
// # Archive
//
// [Archive] is a [relaykit.Sink] that writes each event as one line through
// a Writer it owns: the raw message ([FormatRaw], line breaks written as
// #012 and #015) or a JSON object ([FormatJSON], see [AppendJSON]). It does
// not allocate per event once warm. A batch is written with one write(2)
// per 512 KiB of lines, and Send returns only once it is in the file (and
// fsynced, with [ArchiveConfig].Fsync, one group commit for concurrent
// batches): an accepted batch survives kill -9, and with Fsync a power
// loss. A batch that failed part way is reported as a [relaykit.BatchError]
// listing the events not written.
//
// # Spool
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
// # Spool format
//
// A spool is a directory of segment files named by a 20-digit sequence
// number (00000000000000000001.seg, ...), a head file and a lock file. A
// segment starts with the 8-byte magic "RKSPOOL3" and holds records; a
// record is one batch, a 28-byte header and a payload (integers little
// endian):
//
//	marker    "RKR3"     4 bytes, where a reader resynchronises after damage
//	length    uint32     payload length in bytes
//	events    uint32     events in the batch
//	appended  int64      append time, unix ns
//	crc       uint32     CRC-32C (Castagnoli) of the payload
//	hcrc      uint32     CRC-32C of the 24 header bytes before it
//	payload              uvarint event count, varint append time, then per
//	                     event: varint ReceiveTime, varint Time, byte
//	                     Priority, uvarint Flags, then Host, Source,
//	                     SourceType, Index, Raw as uvarint length + bytes,
//	                     then uvarint field count and each key and value as
//	                     uvarint length + bytes
//
// A new segment starts when the current one would exceed
// [SpoolConfig.SegmentBytes]. The head file holds two 32-byte slots
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
// Segments of version 2 ("RKSPOOL2", records of an 8-byte header: length
// and CRC) and their "position" file, written by earlier releases, are
// read after an upgrade; new records always go to version 3 segments.
//
// # Spool crash semantics
//
// Append writes each record with one pwrite(2) and returns after it; with
// the default policy that is the durability point: a batch whose Append
// returned nil is in the page cache and survives kill -9 of the process
// (the kernel owns the data), but not a power loss or a kernel crash. Set
// [SpoolConfig.Fsync] to fsync the segment on every Append (and the head
// file on every Ack) to survive those too, at the cost of a disk flush per
// call.
//
// If the process dies during an Append, the last record may be incomplete
// (that Append had not returned). [OpenSpool] scans the newest segment and
// cuts what follows its last valid record ([SpoolStats].TornBytes). A
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
// ([SpoolStats] Corrupt, CorruptBytes, LostEvents, TornBytes,
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
// When the spool holds [SpoolConfig.MaxBytes], Append refuses new batches
// with [ErrSpoolFull] and writes nothing: the caller counts them, waits for
// room, or calls [Spool.Discard] to drop the oldest segment's records
// (without waiting for a Peek in progress). Unread data is never
// overwritten silently.
//
// The spool knows its backlog ([SpoolStats] Batches, Events and Oldest):
// every record header carries its event count and append time, and
// [OpenSpool] reads them, so a restarted process knows exactly what an
// earlier one left.
//
// A Spool works on an [FS]; package storagetest wraps one to inject disk
// faults, and damages files as disks do, for tests of code built on it.
//
// # Concurrency
//
// Writer, Archive and Spool are safe for concurrent use by multiple
// goroutines. A Writer runs two goroutines (timer: flushes and the next
// file; mill: fsync, compression, retention) that Close stops and waits for.
// A Spool runs none. Only one Writer (per Layout) or Spool may use a
// directory at a time.
//
// Importing the package starts the process-wide clock goroutine of
// github.com/agilira/go-timecache; leak checks ignore it with
// goleak.IgnoreTopFunction("github.com/agilira/go-timecache.(*TimeCache).updateLoop").
package storage
