// Package storage writes events to disk: a rotating file [Writer], an
// [Archive] sink that writes every event as one line through it, and a
// [Spool], the disk queue that keeps batches a destination could not take
// until they can be replayed.
package storage
