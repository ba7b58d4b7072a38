package relaykit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

func fill(e *relaykit.Event) {
	e.ReceiveTime = 1_700_000_000_123_000_000
	e.Time = 1_700_000_000_000_000_000
	e.Host = append(e.Host, "web-1"...)
	e.Source = append(e.Source, "sshd"...)
	e.SourceType = append(e.SourceType, "syslog"...)
	e.Index = append(e.Index, "main"...)
	e.Raw = append(e.Raw, "Failed password for root from 192.0.2.7 port 22"...)
	e.SetPriority(4, 6)
	e.SetFieldString("user", "root")
	e.SetFieldString("src_ip", "192.0.2.7")
}

func TestFieldGetSetDelete(t *testing.T) {
	var e relaykit.Event
	_, ok := e.Field("a")
	assert.False(t, ok)

	e.SetFieldString("a", "1")
	e.SetField("b", []byte("2"))
	e.SetFieldString("c", "3")
	e.SetFieldString("a", "10") // replace in place keeps order

	v, ok := e.Field("a")
	require.True(t, ok)
	assert.Equal(t, "10", string(v))
	assert.Equal(t, []string{"a", "b", "c"}, keys(&e))

	assert.True(t, e.DeleteField("b"))
	assert.False(t, e.DeleteField("b"))
	assert.Equal(t, []string{"a", "c"}, keys(&e))

	// The deleted slot's buffers are reused and carry no stale value.
	e.SetFieldString("d", "4")
	v, ok = e.Field("d")
	require.True(t, ok)
	assert.Equal(t, "4", string(v))
	assert.Equal(t, []string{"a", "c", "d"}, keys(&e))
}

func TestRenameField(t *testing.T) {
	var e relaykit.Event
	e.SetFieldString("a", "1")
	e.SetFieldString("b", "2")
	e.SetFieldString("c", "3")

	assert.True(t, e.RenameField("a", "c")) // replaces the existing c
	assert.Equal(t, []string{"c", "b"}, keys(&e))
	v, _ := e.Field("c")
	assert.Equal(t, "1", string(v))

	assert.False(t, e.RenameField("missing", "x"))
	assert.True(t, e.RenameField("b", "b"))
	assert.False(t, e.RenameField("zz", "zz"))
}

func TestPriority(t *testing.T) {
	var e relaykit.Event
	_, ok := e.Facility()
	assert.False(t, ok)
	e.SetPriority(23, 7)
	f, ok := e.Facility()
	assert.True(t, ok)
	assert.Equal(t, uint8(23), f)
	s, _ := e.Severity()
	assert.Equal(t, uint8(7), s)
	assert.Equal(t, uint8(191), e.Priority)
}

func TestEventTime(t *testing.T) {
	var e relaykit.Event
	assert.True(t, e.EventTime().IsZero())
	e.ReceiveTime = 2_000_000_000
	assert.Equal(t, time.Unix(2, 0).UTC(), e.EventTime())
	e.Time = 1_000_000_000
	assert.Equal(t, time.Unix(1, 0).UTC(), e.EventTime())
}

func TestResetKeepsCapacity(t *testing.T) {
	var e relaykit.Event
	fill(&e)
	rawCap := cap(e.Raw)
	fieldsCap := cap(e.Fields)
	e.Reset()

	assert.Zero(t, e.ReceiveTime)
	assert.Zero(t, e.Flags)
	assert.Empty(t, e.Raw)
	assert.Empty(t, e.Host)
	assert.Empty(t, e.Fields)
	assert.Equal(t, rawCap, cap(e.Raw))
	assert.Equal(t, fieldsCap, cap(e.Fields))
	_, ok := e.Field("user")
	assert.False(t, ok)
}

func TestCloneIsDeep(t *testing.T) {
	var e relaykit.Event
	fill(&e)
	c := e.Clone()
	assert.Equal(t, e, c)

	c.Raw[0] = 'X'
	c.Host[0] = 'X'
	c.SetFieldString("user", "alice")
	c.Fields[1].Value[0] = '9'
	assert.Equal(t, byte('F'), e.Raw[0])
	assert.Equal(t, byte('w'), e.Host[0])
	v, _ := e.Field("user")
	assert.Equal(t, "root", string(v))
	v, _ = e.Field("src_ip")
	assert.Equal(t, "192.0.2.7", string(v))

	// Appending to a clone's slice must not write into a neighbour.
	c2 := e.Clone()
	c2.Host = append(c2.Host, "-extra"...)
	assert.Equal(t, "sshd", string(c2.Source))

	var empty relaykit.Event
	assert.Equal(t, empty, empty.Clone())
}

func TestCopyTo(t *testing.T) {
	var src, dst relaykit.Event
	fill(&src)
	dst.SetFieldString("stale", "x")
	dst.SetFieldString("stale2", "y")
	dst.SetFieldString("stale3", "z")
	src.CopyTo(&dst)
	assert.Equal(t, src, dst)
	dst.Raw[0] = 'X'
	dst.Fields[0].Value[0] = 'X'
	assert.Equal(t, byte('F'), src.Raw[0])
	v, _ := src.Field("user")
	assert.Equal(t, "root", string(v))
}

func TestSize(t *testing.T) {
	var e relaykit.Event
	assert.Zero(t, e.Size())
	fill(&e)
	want := len("web-1") + len("sshd") + len("syslog") + len("main") +
		len("Failed password for root from 192.0.2.7 port 22") +
		len("user") + len("root") + len("src_ip") + len("192.0.2.7")
	assert.Equal(t, want, e.Size())
}

func TestSinkFunc(t *testing.T) {
	var got int
	boom := errors.New("boom")
	s := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		got += len(batch)
		return boom
	})
	err := s.Send(t.Context(), make([]relaykit.Event, 3))
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 3, got)
}

func TestRefillDoesNotAllocate(t *testing.T) {
	var e relaykit.Event
	fill(&e)
	allocs := testing.AllocsPerRun(100, func() {
		e.Reset()
		fill(&e)
	})
	assert.Zero(t, allocs)

	var dst relaykit.Event
	e.CopyTo(&dst)
	allocs = testing.AllocsPerRun(100, func() { e.CopyTo(&dst) })
	assert.Zero(t, allocs)
}

func keys(e *relaykit.Event) []string {
	var ks []string
	for _, f := range e.Fields {
		ks = append(ks, string(f.Key))
	}
	return ks
}
