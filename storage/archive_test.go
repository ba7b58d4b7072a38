package storage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/storage"
)

type jsonLine struct {
	Time       string            `json:"time"`
	Host       string            `json:"host"`
	Source     string            `json:"source"`
	SourceType string            `json:"sourcetype"`
	Index      string            `json:"index"`
	Facility   string            `json:"facility"`
	FacCode    *int              `json:"facility_code"`
	Severity   string            `json:"severity"`
	SevCode    *int              `json:"severity_code"`
	Message    string            `json:"message"`
	MessageB64 []byte            `json:"message_base64"` // encoding/json decodes base64 into []byte
	Fields     map[string]string `json:"fields"`
}

// viaEncodingJSON returns what encoding/json makes of s: the reference for
// escaping invalid UTF-8.
func viaEncodingJSON(t *testing.T, s []byte) string {
	t.Helper()
	b, err := json.Marshal(string(s))
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestAppendJSON(t *testing.T) {
	var e relaykit.Event
	e.Time = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC).UnixNano()
	e.Host = []byte("web-1")
	e.SourceType = []byte("syslog")
	e.Raw = []byte("quote \" backslash \\ tab \t nl \n bell \x07 bad \xff\xfe end \u2028")
	e.SetFieldString("src_ip", "10.0.0.1")
	e.SetFieldString("k\"ey", "v\x00")
	line := storage.AppendJSON(nil, &e)
	require.True(t, json.Valid(line), "%s", line)
	var got jsonLine
	require.NoError(t, json.Unmarshal(line, &got))
	assert.Equal(t, "2026-11-22T10:00:00.123456789Z", got.Time)
	assert.Equal(t, "web-1", got.Host)
	assert.Empty(t, got.Source)
	assert.Equal(t, "syslog", got.SourceType)
	assert.Equal(t, viaEncodingJSON(t, e.Raw), got.Message)
	assert.Equal(t, e.Raw, got.MessageB64, "the bytes of a message that is not UTF-8 are kept in message_base64")
	assert.Equal(t, map[string]string{"src_ip": "10.0.0.1", "k\"ey": "v\x00"}, got.Fields)
	assert.NotContains(t, string(line), "\n")
	assert.NotContains(t, string(line), "time_is_receive_time", "the event has a time of its own")
	assert.Equal(t, `{"message":""}`, string(storage.AppendJSON(nil, &relaykit.Event{})))

	// A valid UTF-8 message is not repeated.
	e.Raw = []byte("grüße \ufffd as text")
	line = storage.AppendJSON(nil, &e)
	assert.NotContains(t, string(line), "message_base64")
}

// TestAppendJSONPriority: facility and severity, by name (RFC 5424 tables
// 1 and 2 as syslog.conf spells them) and code, for events with a PRI
// only; every field is kept, syslog ones included.
func TestAppendJSONPriority(t *testing.T) {
	tests := []struct {
		name     string
		pri      int // -1: no PRI
		facility string
		severity string
	}{
		{"kern.emerg <0>", 0, "kern", "emerg"},
		{"auth.err <35>", 35, "auth", "err"},
		{"authpriv.notice <85>", 85, "authpriv", "notice"},
		{"cron.info <78>", 78, "cron", "info"},
		{"local4.warning <164>", 164, "local4", "warning"},
		{"local7.debug <191>", 191, "local7", "debug"},
		{"no PRI", -1, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e relaykit.Event
			e.Raw = []byte("sd test")
			e.Host, e.Source = []byte("vm"), []byte("myapp")
			if tt.pri >= 0 {
				e.SetPriority(uint8(tt.pri>>3), uint8(tt.pri&7))
			}
			e.SetFieldString("msgid", "LOGIN")
			e.SetFieldString("procid", "4711")
			e.SetFieldString("sd.origin@32473.ip", "10.1.2.3")
			line := storage.AppendJSON(nil, &e)
			require.True(t, json.Valid(line), "%s", line)
			var got jsonLine
			require.NoError(t, json.Unmarshal(line, &got))
			assert.Equal(t, tt.facility, got.Facility)
			assert.Equal(t, tt.severity, got.Severity)
			if tt.pri < 0 {
				assert.Nil(t, got.FacCode)
				assert.Nil(t, got.SevCode)
				assert.NotContains(t, string(line), "facility")
			} else {
				require.NotNil(t, got.FacCode)
				require.NotNil(t, got.SevCode)
				assert.Equal(t, tt.pri>>3, *got.FacCode)
				assert.Equal(t, tt.pri&7, *got.SevCode)
			}
			assert.Equal(t, map[string]string{"msgid": "LOGIN", "procid": "4711", "sd.origin@32473.ip": "10.1.2.3"}, got.Fields)
		})
	}
	e := relaykit.Event{}
	e.SetPriority(4, 3)
	assert.Equal(t, `{"facility":"auth","facility_code":4,"severity":"err","severity_code":3,"message":""}`, string(storage.AppendJSON(nil, &e)))
	// A message without PRI: user.notice, and the archive says it was assumed.
	e = relaykit.Event{Priority: relaykit.PriorityAssumed, Flags: relaykit.FlagPriority | relaykit.FlagPriorityAssumed}
	assert.Equal(t, `{"facility":"user","facility_code":1,"severity":"notice","severity_code":5,"priority_assumed":true,"message":""}`, string(storage.AppendJSON(nil, &e)))
}

func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte("hello"), []byte("host"), []byte("key"), []byte("value"), uint8(0), true)
	f.Add([]byte("\xff\xfe\xfd"), []byte(""), []byte("\x00"), []byte("\"\\"), uint8(255), true)
	f.Add([]byte("\u2028\u2029\ud7ff"), []byte("\xed\xa0\x80"), []byte("k"), []byte("\x7f"), uint8(35), false)
	f.Fuzz(func(t *testing.T, msg, host, key, value []byte, pri uint8, hasPri bool) {
		e := relaykit.Event{ReceiveTime: 1, Raw: msg, Host: host, Priority: pri}
		if hasPri {
			e.Flags |= relaykit.FlagPriority
		}
		e.Fields = []relaykit.Field{{Key: key, Value: value}}
		line := storage.AppendJSON([]byte("prefix"), &e)[len("prefix"):]
		require.True(t, json.Valid(line), "%q", line)
		assert.NotContains(t, string(line), "\n")
		var got jsonLine
		require.NoError(t, json.Unmarshal(line, &got))
		assert.Equal(t, viaEncodingJSON(t, msg), got.Message)
		assert.Equal(t, viaEncodingJSON(t, host), got.Host)
		assert.Equal(t, viaEncodingJSON(t, value), got.Fields[viaEncodingJSON(t, key)])
		if hasPri {
			require.NotNil(t, got.FacCode)
			require.NotNil(t, got.SevCode)
			assert.Equal(t, int(pri>>3), *got.FacCode)
			assert.Equal(t, int(pri&7), *got.SevCode)
		} else {
			assert.Nil(t, got.FacCode)
		}
	})
}

func TestArchive(t *testing.T) {
	tests := []struct {
		format storage.Format
		want   string
	}{
		{storage.FormatRaw, "first\nmulti#012line#015\n\n"},
		{storage.FormatJSON, `{"time":"1970-01-01T00:00:01Z","time_is_receive_time":true,"host":"h","message":"first"}` + "\n" +
			`{"message":"multi\nline\r","fields":{"a":"b"}}` + "\n" +
			`{"message":""}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format.String(), func(t *testing.T) {
			dir := t.TempDir()
			a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: dir}, Format: tt.format})
			require.NoError(t, err)
			batch := make([]relaykit.Event, 3)
			batch[0].ReceiveTime = int64(time.Second)
			batch[0].Host = []byte("h")
			batch[0].Raw = []byte("first")
			batch[1].Raw = []byte("multi\nline\r")
			batch[1].SetFieldString("a", "b")
			require.NoError(t, a.Send(t.Context(), batch))
			path := a.Writer().Path()
			require.NoError(t, a.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			st := a.Stats()
			assert.Equal(t, int64(3), st.Events)
			assert.Equal(t, int64(1), st.Batches)
			assert.Equal(t, int64(len(tt.want)), st.Bytes)

			err = a.Send(t.Context(), batch)
			assert.ErrorIs(t, err, storage.ErrClosed)
			assert.Equal(t, int64(3), a.Stats().Failed)
		})
	}
}

func TestArchiveConcurrentSend(t *testing.T) {
	dir := t.TempDir()
	a, err := storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: dir, MaxBytes: 64 << 10}, Format: storage.FormatJSON,
	})
	require.NoError(t, err)
	const senders, batches, size = 4, 50, 100
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			batch := make([]relaykit.Event, size)
			for b := range batches {
				for i := range batch {
					batch[i].Raw = fmt.Appendf(batch[i].Raw[:0], "g%d b%d i%d %s", g, b, i, strings.Repeat("z", i))
				}
				if err := a.Send(context.Background(), batch); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, a.Close())
	_, contents := dirFiles(t, dir)
	lines := 0
	for name, data := range contents {
		require.True(t, strings.HasSuffix(data, "\n"), name)
		for line := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
			require.True(t, json.Valid([]byte(line)), "%s: %q", name, line)
			lines++
		}
	}
	assert.Equal(t, senders*batches*size, lines)
	assert.Equal(t, int64(senders*batches*size), a.Stats().Events)
}

func TestArchiveZeroAllocs(t *testing.T) {
	for _, format := range []storage.Format{storage.FormatRaw, storage.FormatJSON} {
		t.Run(format.String(), func(t *testing.T) {
			a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: t.TempDir()}, Format: format})
			require.NoError(t, err)
			defer a.Close()
			batch := make([]relaykit.Event, 16)
			for i := range batch {
				batch[i].ReceiveTime = time.Now().UnixNano()
				batch[i].Host = []byte("host")
				batch[i].Raw = []byte("<134>an ordinary log line with a few words \xff")
				batch[i].SetFieldString("k", "v")
				batch[i].SetPriority(uint8(i), uint8(i))
			}
			ctx := context.Background()
			require.NoError(t, a.Send(ctx, batch))
			allocs := testing.AllocsPerRun(200, func() {
				if err := a.Send(ctx, batch); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

func TestArchiveCanceledContext(t *testing.T) {
	a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: t.TempDir()}})
	require.NoError(t, err)
	defer a.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = a.Send(ctx, []relaykit.Event{{Raw: []byte("x")}})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: t.TempDir()}, Format: 9})
	assert.ErrorIs(t, err, storage.ErrInvalidConfig)
}

// TestArchiveWrittenOnSend: a batch Send accepted is in the file when Send
// returns, not in a buffer (nothing to flush at Close).
func TestArchiveWrittenOnSend(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: t.TempDir()}, Fsync: fsync})
		require.NoError(t, err)
		require.NoError(t, a.Send(t.Context(), []relaykit.Event{{Raw: []byte("one")}, {Raw: []byte("two")}}))
		assert.Equal(t, "one\ntwo\n", readFile(t, a.Writer().Path()), "fsync %v", fsync)
		st := a.Stats()
		assert.Equal(t, int64(1), st.Writes, "one write(2) for the batch")
		require.NoError(t, a.Close())
	}
}

// TestArchiveDiskFull: on a full file system Send fails, writes nothing of
// the batch, and works again once there is room, without a restart.
func TestArchiveDiskFull(t *testing.T) {
	dir := testtool.Tmpfs(t, "256k")
	a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: dir}})
	require.NoError(t, err)
	defer a.Close()
	batch := make([]relaykit.Event, 10)
	for i := range batch {
		batch[i].Raw = []byte(strings.Repeat("y", 999))
	}
	var serr error
	sent := 0
	for serr == nil {
		if serr = a.Send(t.Context(), batch); serr == nil {
			sent++
		}
	}
	require.ErrorIs(t, serr, syscall.ENOSPC)
	path := a.Writer().Path()
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(sent*10*1000), info.Size(), "whole batches only")
	require.NoError(t, os.Truncate(path, 0))
	require.NoError(t, a.Send(t.Context(), batch[:1]))
	assert.Equal(t, strings.Repeat("y", 999)+"\n", readFile(t, path))
	assert.Equal(t, int64(10), a.Stats().Failed)
}

const archiveChildEnv = "RELAYKIT_ARCHIVE_KILL_DIR"

// TestArchiveKillChild is the child of TestArchiveKill: it archives
// numbered batches and prints "acked N" after each Send returned nil.
func TestArchiveKillChild(t *testing.T) {
	dir := os.Getenv(archiveChildEnv)
	if dir == "" {
		t.Skip("run by TestArchiveKill")
	}
	a, err := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: dir}})
	require.NoError(t, err)
	batch := make([]relaykit.Event, 100)
	for n := 0; ; n++ {
		for i := range batch {
			batch[i].Raw = fmt.Appendf(batch[i].Raw[:0], "%d-%d", n, i)
		}
		if err := a.Send(context.Background(), batch); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("acked", n)
	}
}

// TestArchiveKill kills an archiving process with SIGKILL: every batch
// whose Send returned is in the file, whole.
func TestArchiveKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestArchiveKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), archiveChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	acked := -1
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.Atoi(s)
			if acked == 300 {
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			}
		}
	}
	_ = cmd.Wait()
	require.GreaterOrEqual(t, acked, 300)
	_, contents := dirFiles(t, dir)
	var all strings.Builder
	for _, c := range contents {
		all.WriteString(c)
	}
	lines := map[string]bool{}
	for l := range strings.SplitSeq(all.String(), "\n") {
		lines[l] = true
	}
	for n := 0; n <= acked; n++ {
		for i := range 100 {
			require.True(t, lines[fmt.Sprintf("%d-%d", n, i)], "acknowledged line %d-%d missing", n, i)
		}
	}
}
