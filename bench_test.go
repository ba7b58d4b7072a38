package relaykit_test

import (
	"testing"

	"github.com/relaykit/relaykit"
)

func BenchmarkField(b *testing.B) {
	var e relaykit.Event
	fill(&e)
	e.SetFieldString("action", "deny")
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := e.Field("action"); !ok {
				b.Fatal("missing field")
			}
		}
	})
	b.Run("set", func(b *testing.B) {
		b.ReportAllocs()
		val := []byte("allow")
		for b.Loop() {
			e.SetField("action", val)
		}
	})
}

func BenchmarkResetRefill(b *testing.B) {
	var e relaykit.Event
	fill(&e)
	b.ReportAllocs()
	for b.Loop() {
		e.Reset()
		fill(&e)
	}
	if v, _ := e.Field("user"); string(v) != "root" {
		b.Fatal("refill lost a field")
	}
}

func BenchmarkCopyTo(b *testing.B) {
	var src, dst relaykit.Event
	fill(&src)
	b.ReportAllocs()
	for b.Loop() {
		src.CopyTo(&dst)
	}
}

func BenchmarkClone(b *testing.B) {
	var src relaykit.Event
	fill(&src)
	b.ReportAllocs()
	for b.Loop() {
		_ = src.Clone()
	}
}
