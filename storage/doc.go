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
// also after every timed flush, [SyncNone] never. Errors writing the file are
// sticky: every later Write returns the first one, like bufio.Writer.
//
// # Archive
//
// [Archive] is a [relaykit.Sink] that writes each event as one line through
// a Writer it owns: the raw message ([FormatRaw], line breaks written as
// #012 and #015) or a JSON object ([FormatJSON], see [AppendJSON]). It does
// not allocate per event once warm.
//
// # Spool format
//
// A spool is a directory of segment files named by a 20-digit sequence
// number (00000000000000000001.seg, ...) and a file named position. A
// segment starts with the 8-byte magic "RKSPOOL2" and holds records; a
// record is one batch:
//
//	length  uint32 LE   payload length in bytes
//	crc     uint32 LE   CRC-32C (Castagnoli) of the payload
//	payload             uvarint event count, varint append time (unix ns),
//	                    then per event:
//	                    varint ReceiveTime, varint Time, byte Priority,
//	                    uvarint Flags, then Host, Source, SourceType, Index,
//	                    Raw as uvarint length + bytes, then uvarint field
//	                    count and each key and value as uvarint length + bytes
//
// A new segment starts when the current one would exceed
// [SpoolConfig.SegmentBytes]. The position file holds the segment number and
// offset of the next unread record (with a magic and a CRC); it is replaced
// atomically (written to position.tmp, renamed) after each replayed batch.
// Fully replayed segments are removed; an emptied spool holds no segments.
//
// # Spool crash semantics
//
// Append writes each record with one write(2) and returns after it; with
// the default policy that is the durability point: a batch whose Append
// returned nil is in the page cache and survives kill -9 of the process
// (the kernel owns the data), but not a power loss or a kernel crash. Set
// [SpoolConfig.Fsync] to fsync the segment on every Append (and the
// position file on every replayed batch) to survive those too, at the cost
// of a disk flush per call.
//
// If the process dies during an Append, the last record may be incomplete
// (that Append had not returned). [OpenSpool] scans the newest segment,
// checks each record's length and CRC, and cuts everything after the last
// complete record. A batch is removed from the spool only after the Replay
// callback returned nil and the new position was written; if the process
// dies between the two, that one batch is replayed again after restart.
// So delivery is at least once, and the duplicate window is one batch per
// crash during Replay; nothing acknowledged is lost. A record whose
// checksum fails anywhere else (disk corruption) is skipped, with the rest
// of its segment, and counted in [SpoolStats.Corrupt].
//
// When the spool holds [SpoolConfig.MaxBytes], Append refuses new batches
// with [ErrSpoolFull] and writes nothing: the caller counts them, waits for
// room, or calls [Spool.Discard] to drop the oldest segment. Unread data is
// never overwritten silently.
//
// The spool knows its backlog ([SpoolStats] Batches, Events and Oldest):
// every record carries its event count and append time in the first bytes
// of its payload, and [OpenSpool] reads them from the record headers of the
// unread segments, so a restarted process knows exactly what an earlier one
// left.
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
