package storage_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/storage"
)

// BenchmarkArchiveSend measures the archive sink per event (batches of
// 100 events with 100-byte messages). After the loop it checks that every
// event was written.
func BenchmarkArchiveSend(b *testing.B) {
	for _, format := range []storage.Format{storage.FormatRaw, storage.FormatJSON} {
		b.Run("format="+format.String(), func(b *testing.B) {
			a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: b.TempDir()}, Format: format})
			if err != nil {
				b.Fatal(err)
			}
			batch := make([]relaykit.Event, 100)
			for i := range batch {
				e := &batch[i]
				e.ReceiveTime = time.Date(2026, 11, 22, 10, 0, 0, i, time.UTC).UnixNano()
				e.Host = []byte("web-01.example.net")
				e.SourceType = []byte("syslog")
				e.Raw = bytes.Repeat([]byte("m"), 100)
				e.SetFieldString("src_ip", "192.0.2.1")
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(100)
			sent := 0
			for b.Loop() {
				if sent%len(batch) == 0 {
					if err := a.Send(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				sent++
			}
			b.StopTimer()
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			want := int64((sent + len(batch) - 1) / len(batch) * len(batch))
			if got := a.Stats().Events; got != want {
				b.Fatalf("archived %d events, want %d", got, want)
			}
		})
	}
}
