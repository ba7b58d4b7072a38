// Package storage writes events to disk: a rotating file [Writer] and an
// [Archive] sink that writes every event as one line through it. (The disk
// queue that keeps batches for a destination is package spool.)
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
// start at midnight and every Interval after it. The check reads relaykit's
// coarse clock ([Config].Clock, package clock: an atomic load while it is
// read often) rather than calling time.Now per write; tests pass a fake. The timer
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
// # Concurrency
//
// Writer and Archive are safe for concurrent use by multiple goroutines. A
// Writer runs two goroutines (timer: flushes and the next file; mill:
// fsync, compression, retention) that Close stops and waits for. Only one
// Writer (per Layout) may use a directory at a time.
package storage
