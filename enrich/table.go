package enrich

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Table is a static in-memory [Lookup], e.g. loaded from a CSV file. It is
// immutable and safe for concurrent use by multiple goroutines; a Get does
// not allocate. To change it, build a new Table and swap it in (for
// example behind a [LookupFunc] that loads an atomic.Pointer).
type Table struct {
	m map[string][]byte
}

// NewTable returns a Table holding a copy of entries.
func NewTable(entries map[string]string) *Table {
	t := &Table{m: make(map[string][]byte, len(entries))}
	for k, v := range entries {
		t.m[k] = []byte(v)
	}
	return t
}

// Get returns the value for key. It never fails; ctx is ignored.
func (t *Table) Get(_ context.Context, key []byte) ([]byte, bool, error) {
	v, ok := t.m[string(key)]
	return v, ok, nil
}

// Len returns the number of keys.
func (t *Table) Len() int { return len(t.m) }

var _ Lookup = (*Table)(nil)

// CSVConfig configures [LoadCSV].
type CSVConfig struct {
	// Header means the first record names the columns. It is required
	// when KeyColumn or ValueColumn is set.
	Header bool
	// KeyColumn and ValueColumn name the header columns that hold keys and
	// values. Empty means the first and the second column.
	KeyColumn, ValueColumn string
	// Comma is the field delimiter. Zero means ','.
	Comma rune
}

// LoadCSV reads a Table from CSV (RFC 4180, as encoding/csv reads it).
// Records may have any number of fields as long as they hold the key and
// value columns. A key that appears twice keeps its last value. The error
// wraps [ErrInvalidConfig] for a bad cfg, or says which line is malformed.
func LoadCSV(r io.Reader, cfg CSVConfig) (*Table, error) {
	if !cfg.Header && (cfg.KeyColumn != "" || cfg.ValueColumn != "") {
		return nil, fmt.Errorf("%w: CSV column names need Header", ErrInvalidConfig)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	if cfg.Comma != 0 {
		cr.Comma = cfg.Comma
	}
	ki, vi := 0, 1
	if cfg.Header {
		h, err := cr.Read()
		if err != nil {
			return nil, fmt.Errorf("enrich: read CSV header: %w", err)
		}
		find := func(name string, def int) (int, error) {
			if name == "" {
				return def, nil
			}
			if i := slices.Index(h, name); i >= 0 {
				return i, nil
			}
			return 0, fmt.Errorf("%w: CSV has no column %q", ErrInvalidConfig, name)
		}
		var err1, err2 error
		ki, err1 = find(cfg.KeyColumn, 0)
		vi, err2 = find(cfg.ValueColumn, 1)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
	}
	t := &Table{m: make(map[string][]byte)}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("enrich: read CSV: %w", err)
		}
		if len(rec) <= max(ki, vi) {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("enrich: CSV line %d has %d fields, want at least %d", line, len(rec), max(ki, vi)+1)
		}
		t.m[rec[ki]] = []byte(rec[vi])
	}
}

// OpenCSV reads a Table from the CSV file at path; see [LoadCSV].
func OpenCSV(path string, cfg CSVConfig) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("enrich: open CSV table: %w", err)
	}
	defer f.Close()
	return LoadCSV(f, cfg)
}
