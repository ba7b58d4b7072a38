package sources

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// stateMagic is the first line of a state file.
const stateMagic = "relaykit-sources 1\n"

// maxStateFile bounds the size of a state file Load reads.
const maxStateFile = 256 << 20

// stateLine is one key of a state file.
type stateLine struct {
	key                 Key
	firstSeen, lastSeen int64
	silent              bool
	events, bytes       uint64
}

// Save writes the keys that have sent, with their first and last seen,
// their silent state and their counts, to the state file at path,
// replacing it atomically: it writes a temporary file in the same
// directory, fsyncs it, renames it over path and fsyncs the directory, so
// that path holds the previous state or the new one, never a mix, even
// after a crash. Save is safe to call while inputs and Run are busy (it
// reads each key atomically, field by field); concurrent Saves are
// serialised.
//
// The file is text: a header line, one line per key
// ("a ADDR FIRST LAST SILENT EVENTS BYTES" or "h QUOTED-HOST ..." with
// times in ns since the Unix epoch) and a trailer with the number of keys
// and a CRC-32C of everything before it. It is about 70 bytes per key.
func (t *Tracker) Save(path string) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	var lines []stateLine
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.each(func(e *entry) {
			last := e.lastSeen.Load()
			if last == 0 {
				return
			}
			lines = append(lines, stateLine{
				key:       e.key,
				firstSeen: e.firstSeen.Load(),
				lastSeen:  last,
				silent:    e.state.Load()&flagSilent != 0,
				events:    e.events.Load(),
				bytes:     e.bytes.Load(),
			})
		})
		s.mu.Unlock()
	}
	slices.SortFunc(lines, func(a, b stateLine) int { return a.key.Compare(b.key) })

	buf := make([]byte, 0, len(stateMagic)+len(lines)*80+64)
	buf = append(buf, stateMagic...)
	for _, l := range lines {
		if h, ok := l.key.Host(); ok {
			buf = append(buf, "h "...)
			buf = strconv.AppendQuote(buf, h)
		} else {
			buf = append(buf, "a "...)
			buf = l.key.AppendTo(buf)
		}
		for _, n := range [...]int64{l.firstSeen, l.lastSeen} {
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, n, 10)
		}
		if l.silent {
			buf = append(buf, " 1"...)
		} else {
			buf = append(buf, " 0"...)
		}
		for _, n := range [...]uint64{l.events, l.bytes} {
			buf = append(buf, ' ')
			buf = strconv.AppendUint(buf, n, 10)
		}
		buf = append(buf, '\n')
	}
	sum := crc32.Checksum(buf, crc32.MakeTable(crc32.Castagnoli))
	buf = fmt.Appendf(buf, "end %d %08x\n", len(lines), sum)
	if err := writeAtomic(path, buf); err != nil {
		return fmt.Errorf("sources: save %s: %w", path, err)
	}
	return nil
}

// writeAtomic replaces path with data: temporary file, fsync, rename,
// fsync of the directory.
func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err = d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}

// Load reads a state file written by [Tracker.Save] and merges it into the
// tracker: a key it names is tracked again with its first and last seen,
// its counts and, if it was silent, its silent state (not reported again:
// it is reported active when it sends). Time for silence starts when Run
// starts, so a source that stopped while the relay was down is reported
// silent SilentAfter after the start, with its true last seen. A key the
// tracker already has keeps the earliest first seen and the latest last
// seen, and adds the counts. When the file holds more keys than there is
// room for, the most recently seen are loaded. Load returns the number of
// keys loaded.
//
// Load must be called before Run starts (or the first Tick); afterwards it
// returns [ErrRunning]. A missing file (the first start) gives an error wrapping
// fs.ErrNotExist, a damaged or foreign one an error wrapping [ErrCorrupt];
// either way nothing is loaded, and a relay logs the error and starts
// with what its configuration says.
func (t *Tracker) Load(path string) (int, error) {
	t.tickMu.Lock() // the tick-owned fields are Load's until the first tick
	defer t.tickMu.Unlock()
	if t.started.Load() {
		return 0, ErrRunning
	}
	lines, err := readState(path)
	if err != nil {
		return 0, fmt.Errorf("sources: load %s: %w", path, err)
	}
	// Most recent first, so that the ones that do not fit are the oldest.
	slices.SortFunc(lines, func(a, b stateLine) int {
		switch {
		case a.lastSeen > b.lastSeen:
			return -1
		case a.lastSeen < b.lastSeen:
			return 1
		}
		return a.key.Compare(b.key)
	})
	n := 0
	for _, l := range lines {
		e := t.get(l.key)
		if e == nil {
			if t.count.Load() >= int64(t.cfg.MaxSources) {
				continue // no room: never evict for an old key
			}
			e = t.lookup(l.key)
		}
		if f := e.firstSeen.Load(); f == 0 || (l.firstSeen != 0 && l.firstSeen < f) {
			e.firstSeen.Store(l.firstSeen)
		}
		storeMax(&e.lastSeen, l.lastSeen)
		ev := e.events.Add(l.events)
		e.bytes.Add(l.bytes)
		e.prevEvents = ev
		e.rateInit = true
		if l.silent && e.state.Load()&flagSilent == 0 && ev == l.events {
			// Silent when saved and not heard from since: silent now.
			e.state.Store(e.state.Load() | flagSilent)
			e.eventsAtSilent = ev
			e.silentLast = l.lastSeen
			e.silentRef = l.lastSeen
		}
		n++
	}
	return n, nil
}

// readState reads and checks a state file.
func readState(path string) ([]stateLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCorrupt, maxStateFile)
	}
	if !bytes.HasPrefix(data, []byte(stateMagic)) {
		return nil, fmt.Errorf("%w: no header", ErrCorrupt)
	}
	// The trailer is the last line.
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	body, trailer := data[:i], data[i:len(data)-1]
	var count int
	var sum uint32
	if _, err := fmt.Sscanf(string(trailer), "end %d %08x", &count, &sum); err != nil {
		return nil, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	if count < 0 || count > len(body)/8 { // a key line is longer than 8 bytes
		return nil, fmt.Errorf("%w: trailer counts %d keys", ErrCorrupt, count)
	}
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	rest := body[len(stateMagic):]
	lines := make([]stateLine, 0, count)
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		l, err := parseStateLine(string(rest[:nl]))
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrCorrupt, len(lines)+2, err)
		}
		lines = append(lines, l)
		rest = rest[nl+1:]
	}
	if len(lines) != count {
		return nil, fmt.Errorf("%w: %d keys, trailer says %d", ErrCorrupt, len(lines), count)
	}
	return lines, nil
}

var errBadLine = errors.New("malformed")

// parseStateLine parses one key line.
func parseStateLine(s string) (stateLine, error) {
	var l stateLine
	if len(s) < 2 || s[1] != ' ' {
		return l, errBadLine
	}
	kind, s := s[0], s[2:]
	switch kind {
	case 'h':
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return l, errBadLine
		}
		h, _ := strconv.Unquote(q)
		if len(h) > MaxHostLen {
			return l, errBadLine
		}
		l.key, s = HostKey(h), s[len(q):]
	case 'a':
		sp := indexByte(s, ' ')
		a, err := netip.ParseAddr(s[:sp])
		if err != nil {
			return l, err
		}
		l.key, s = AddrKey(a), s[sp:]
	default:
		return l, errBadLine
	}
	var silent int
	if _, err := fmt.Sscanf(s, " %d %d %d %d %d", &l.firstSeen, &l.lastSeen, &silent, &l.events, &l.bytes); err != nil {
		return l, errBadLine
	}
	if l.lastSeen <= 0 || l.firstSeen < 0 || silent < 0 || silent > 1 {
		return l, errBadLine
	}
	l.silent = silent == 1
	return l, nil
}

// indexByte returns the index of c in s, or len(s).
func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}
