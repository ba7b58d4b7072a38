package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/relaykit/relaykit"
)

// GeoConfig configures [OpenGeoIP]. At least one of CityPath and ASNPath
// must be set.
type GeoConfig struct {
	// CityPath is the path of a City database (GeoLite2-City or
	// GeoIP2-City; a Country edition works too and fills only the country
	// fields). Empty means no location data.
	CityPath string
	// ASNPath is the path of an ASN database (GeoLite2-ASN). Empty means no
	// AS data.
	ASNPath string
	// CheckInterval is how often [GeoIP.Run] checks the files for a change
	// (modification time, size or identity) and reloads them. Zero means
	// one minute.
	CheckInterval time.Duration
	// StringCacheSlots is the number of slots of the per-database table
	// that keeps decoded places (the English name and ISO code of a city,
	// country or first subdivision) and strings by their offset in the
	// database, so a repeated one costs neither a decode nor an
	// allocation. It is direct-mapped and rounded up to a power of two.
	// Each slot costs 8 bytes, and each kept place or string a 48-byte
	// entry plus its text. Zero means 65536 (3 MiB after a million
	// distinct GeoLite2-City lookups); negative disables the table.
	StringCacheSlots int
	// RecordCacheSlots is the number of slots of the per-database table
	// that keeps decoded records by their offset in the database's data
	// section: many networks share one record (GeoLite2-City maps 3.5
	// million networks to 540 000 records), so a lookup whose record is
	// there costs finding the offset (see DisableIPv4Index) and one probe
	// instead of a decode. The table is 4-way set-associative with the
	// address table's admission rule (below) and rounded up to a power of
	// two (at least 8). Each slot costs 24 bytes, and each kept record a
	// 64-byte entry (the country and subdivision shared with the string
	// table) plus the strings it keeps alive: about 95 bytes per slot when
	// full, 12 MiB for the default with GeoLite2-City. Zero means
	// 131072; negative disables the table.
	RecordCacheSlots int
	// AddressCacheSlots is the number of slots of the table that keeps
	// whole lookup results (both databases merged) by IP address, for the
	// addresses that recur in logs (busy clients, scanners): a hit skips
	// the databases and costs a hash and a probe of one cache line. The
	// table is 4-way set-associative; an address takes a free slot at once
	// and, when its set is full, is admitted on its second miss. It is
	// rounded up to a power of two (at least 8) and emptied by a reload.
	// Each slot costs 24 bytes plus about 220 bytes per admitted address
	// (15.5 MiB when the default table is full). Zero means 65536;
	// negative disables the table.
	AddressCacheSlots int
	// DisableIPv4Index makes IPv4 lookups walk the database's search tree
	// instead of the index that [OpenGeoIP] and each reload otherwise build
	// for a database's IPv4 networks with maxminddb-golang's network
	// iterator. A walk is about 23 dependent loads through the tree (about
	// 0.4 µs of cache misses on GeoLite2-City); the index answers
	// with a probe of a table by the address's /16 and a binary search
	// among that /16's runs of networks that share a record. The index
	// costs 6 bytes per run plus 256 KiB, and is built when the file is
	// opened: 14.1 MiB and about 0.3 s for GeoLite2-City, 1.8 MiB and
	// 30 ms for GeoLite2-Country. IPv6 lookups always walk the tree.
	DisableIPv4Index bool
	// Logger receives reload events (state changes only, never per
	// lookup). Nil means no logging.
	Logger *slog.Logger
}

// GeoRecord holds the fields of a lookup that this package decodes: the
// country, first subdivision and city (English names), location, and
// autonomous system. A field that the databases lack is empty (zero).
type GeoRecord struct {
	// CountryISO is the ISO 3166-1 alpha-2 country code, e.g. "DE".
	CountryISO string
	// CountryName is the English country name, e.g. "Germany".
	CountryName string
	// Subdivision is the English name of the first (largest) subdivision,
	// e.g. a state or region.
	Subdivision string
	// SubdivisionISO is the ISO 3166-2 code of the first subdivision,
	// without the country prefix, e.g. "BE".
	SubdivisionISO string
	// City is the English city name.
	City string
	// Latitude and Longitude are the approximate location in degrees
	// (WGS 84), valid when HasLocation is true.
	Latitude, Longitude float64
	// HasLocation reports whether the record has a location.
	HasLocation bool
	// ASN is the autonomous system number; zero means unknown.
	ASN uint32
	// ASOrg is the organisation of the autonomous system.
	ASOrg string
}

// GeoStats is a snapshot of a [GeoIP]'s counters.
type GeoStats struct {
	// Lookups is the number of [GeoIP.Lookup] calls.
	Lookups uint64
	// Found is the number of lookups that found a record in at least one
	// database.
	Found uint64
	// Errors is the number of lookups that failed (a corrupt database);
	// they return no data.
	Errors uint64
	// Reloads is the number of successful reloads of a database file.
	Reloads uint64
	// ReloadErrors is the number of reloads that failed; the previous
	// database stays in use.
	ReloadErrors uint64
	// CityBuildTime and ASNBuildTime are the build times of the databases
	// in use (from their metadata); zero when not configured.
	CityBuildTime, ASNBuildTime time.Time
}

// GeoIP looks up IP addresses in MaxMind DB files: a City database, an ASN
// database, or both.
//
// Lookups are lock-free and safe for concurrent use by multiple goroutines.
// A reload (see [GeoIP.Reload] and [GeoIP.Run]) opens the changed file as a
// new reader and swaps it in atomically; lookups already running finish on
// the old reader, whose memory map is released by the Go runtime once no
// lookup references it any more.
type GeoIP struct {
	cfg GeoConfig
	log *slog.Logger
	cur atomic.Pointer[geoDBs]

	reloadMu sync.Mutex // serialises Reload and Close
	closed   atomic.Bool

	lookups, found stripedCounter
	errors         atomic.Uint64
	reloads        atomic.Uint64
	reloadErrors   atomic.Uint64
}

// geoDBs is the immutable set of open databases, with the address table
// of lookups in them.
type geoDBs struct {
	city, asn *geoFile
	addrs     *addrTable
}

// geoFile is one open database file.
type geoFile struct {
	path   string
	info   os.FileInfo
	reader *maxminddb.Reader
	v4     *ipv4Index // nil: IPv4 lookups walk the tree
	strs   *stringTable
	recs   *recordTable
	build  time.Time
}

// Database kinds, from the metadata's database_type.
const (
	kindCity = iota
	kindASN
)

// OpenGeoIP opens the databases named by cfg and builds their IPv4
// indexes (see [GeoConfig.DisableIPv4Index]; about 0.3 s for
// GeoLite2-City). The error wraps [ErrInvalidConfig] for a bad
// configuration, or says which file could not be opened, has the wrong
// type, or has a search tree that its network iterator reports as
// corrupt.
func OpenGeoIP(cfg GeoConfig) (*GeoIP, error) {
	if cfg.CityPath == "" && cfg.ASNPath == "" {
		return nil, fmt.Errorf("%w: GeoIP needs a CityPath or an ASNPath", ErrInvalidConfig)
	}
	if cfg.CheckInterval < 0 {
		return nil, fmt.Errorf("%w: GeoIP CheckInterval %v < 0", ErrInvalidConfig, cfg.CheckInterval)
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = time.Minute
	}
	if cfg.StringCacheSlots == 0 {
		cfg.StringCacheSlots = 1 << 16
	}
	if cfg.RecordCacheSlots == 0 {
		cfg.RecordCacheSlots = 1 << 17
	}
	if cfg.AddressCacheSlots == 0 {
		cfg.AddressCacheSlots = 1 << 16
	}
	g := &GeoIP{cfg: cfg, log: cfg.Logger}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	dbs := &geoDBs{addrs: newAddrTable(cfg.AddressCacheSlots)}
	var err error
	if cfg.CityPath != "" {
		if dbs.city, err = g.open(cfg.CityPath, kindCity); err != nil {
			return nil, err
		}
	}
	if cfg.ASNPath != "" {
		if dbs.asn, err = g.open(cfg.ASNPath, kindASN); err != nil {
			return nil, err
		}
	}
	g.cur.Store(dbs)
	return g, nil
}

// open opens one database file and checks its type.
func (g *GeoIP) open(path string, kind int) (*geoFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("enrich: open GeoIP database: %w", err)
	}
	r, err := maxminddb.Open(path, maxminddb.DisableStringCache())
	if err != nil {
		return nil, fmt.Errorf("enrich: open GeoIP database %s: %w", path, err)
	}
	t := r.Metadata.DatabaseType
	switch kind {
	case kindCity:
		if !strings.Contains(t, "City") && !strings.Contains(t, "Country") && !strings.Contains(t, "Enterprise") {
			_ = r.Close()
			return nil, fmt.Errorf("enrich: %s is a %q database, want a City or Country edition", path, t)
		}
	case kindASN:
		if !strings.Contains(t, "ASN") && !strings.Contains(t, "ISP") {
			_ = r.Close()
			return nil, fmt.Errorf("enrich: %s is a %q database, want an ASN edition", path, t)
		}
	}
	var v4 *ipv4Index
	if !g.cfg.DisableIPv4Index {
		if v4, err = newIPv4Index(r); err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("enrich: index GeoIP database %s: %w", path, err)
		}
	}
	return &geoFile{
		path:   path,
		info:   info,
		reader: r,
		v4:     v4,
		strs:   newStringTable(g.cfg.StringCacheSlots),
		recs:   newRecordTable(g.cfg.RecordCacheSlots),
		build:  r.Metadata.BuildTime(),
	}, nil
}

// Lookup returns what the databases hold for ip and whether any of them
// has a record for it. It does not allocate once the string table is warm
// and takes no lock. After [GeoIP.Close] it returns false.
func (g *GeoIP) Lookup(ip netip.Addr) (GeoRecord, bool) {
	var rec GeoRecord
	ok := g.LookupTo(ip, &rec)
	return rec, ok
}

// LookupTo is [GeoIP.Lookup] writing into *rec, which it first resets.
func (g *GeoIP) LookupTo(ip netip.Addr, rec *GeoRecord) bool {
	e, found := g.find(ip, rec)
	if e != nil {
		*rec = e.rec
	}
	return found
}

// find looks ip up. On an address-table hit it returns the entry and
// leaves rec alone; otherwise it resets rec, fills it from the databases
// and returns the entry the result was admitted as, if it was.
func (g *GeoIP) find(ip netip.Addr, rec *GeoRecord) (*addrEntry, bool) {
	g.lookups.add()
	dbs := g.cur.Load()
	if dbs == nil || !ip.IsValid() {
		*rec = GeoRecord{}
		return nil, false
	}
	ip = ip.Unmap()
	var h uint64
	var seen bool
	if dbs.addrs != nil {
		var e *addrEntry
		if e, h = dbs.addrs.get(ip); e != nil {
			if e.found {
				g.found.add()
			}
			return e, e.found
		}
		seen = dbs.addrs.seen(h)
	}
	*rec = GeoRecord{}
	found := false
	failed := false
	if f := dbs.city; f != nil {
		ok, err := f.lookup(ip, kindCity, rec)
		if err != nil {
			g.errors.Add(1)
			failed = true
		}
		found = found || ok
	}
	if f := dbs.asn; f != nil {
		ok, err := f.lookup(ip, kindASN, rec)
		if err != nil {
			g.errors.Add(1)
			failed = true
		}
		found = found || ok
	}
	if found {
		g.found.add()
	}
	if dbs.addrs != nil && !failed {
		return dbs.addrs.putHashed(ip, h, seen, rec, found), found
	}
	return nil, found
}

// geoKeys are a GeoEnricher's field names in the order it writes them.
type geoKeys struct {
	names  [9]string
	unique bool // no name is used twice, so fields can be set in one pass
}

// Indexes into geoKeys.names.
const (
	gkCountryISO = iota
	gkCountryName
	gkSubdivision
	gkSubdivisionISO
	gkCity
	gkLatitude
	gkLongitude
	gkASN
	gkASOrg
)

func newGeoKeys(f GeoFields) geoKeys {
	k := geoKeys{names: [9]string{f.CountryISO, f.CountryName, f.Subdivision, f.SubdivisionISO,
		f.City, f.Latitude, f.Longitude, f.ASN, f.ASOrg}, unique: true}
	seen := map[string]bool{}
	for _, n := range k.names {
		if n != "" && seen[n] {
			k.unique = false
		}
		seen[n] = true
	}
	return k
}

// geoKV is one field to set: key and a value held as a string or bytes.
type geoKV struct {
	key string
	s   string
	b   []byte
}

// setGeoFields looks ip up and writes the non-empty values whose key is
// set into e, replacing fields of the same name in place and appending the
// others in keys order; it reports whether a database had data. On an
// address-table hit the values come preformatted from the entry.
func (g *GeoIP) setGeoFields(e *relaykit.Event, ip netip.Addr, keys *geoKeys) bool {
	var tmp GeoRecord
	ent, ok := g.find(ip, &tmp)
	if !ok {
		return false
	}
	rec := &tmp
	var lat, lon, asn string
	var buf [64]byte
	var blat, blon, basn []byte
	if ent != nil {
		rec, lat, lon, asn = &ent.rec, ent.lat, ent.lon, ent.asn
	} else {
		if rec.HasLocation {
			blat = strconv.AppendFloat(buf[:0], rec.Latitude, 'f', 4, 64)
			blon = strconv.AppendFloat(buf[len(blat):len(blat)], rec.Longitude, 'f', 4, 64)
		}
		if rec.ASN != 0 {
			n := len(blat) + len(blon)
			basn = strconv.AppendUint(buf[n:n], uint64(rec.ASN), 10)
		}
	}
	var kvs [9]geoKV
	n := 0
	add := func(i int, s string, b []byte) {
		if keys.names[i] != "" && (s != "" || len(b) > 0) {
			kvs[n] = geoKV{key: keys.names[i], s: s, b: b}
			n++
		}
	}
	add(gkCountryISO, rec.CountryISO, nil)
	add(gkCountryName, rec.CountryName, nil)
	add(gkSubdivision, rec.Subdivision, nil)
	add(gkSubdivisionISO, rec.SubdivisionISO, nil)
	add(gkCity, rec.City, nil)
	if rec.HasLocation {
		add(gkLatitude, lat, blat)
		add(gkLongitude, lon, blon)
	}
	if rec.ASN != 0 {
		add(gkASN, asn, basn)
	}
	add(gkASOrg, rec.ASOrg, nil)
	setFields(e, kvs[:n], keys.unique)
	return true
}

// setFields sets each kv as a field of e, as a sequence of
// relaykit.Event.SetField calls would, but with one pass over the event's
// fields instead of one per kv when the keys are unique.
func setFields(e *relaykit.Event, kvs []geoKV, unique bool) {
	if !unique {
		for i := range kvs {
			if kvs[i].b != nil {
				e.SetField(kvs[i].key, kvs[i].b)
			} else {
				e.SetFieldString(kvs[i].key, kvs[i].s)
			}
		}
		return
	}
	var done uint16 // bit i: kvs[i] replaced an existing field
	for i := range e.Fields {
		f := &e.Fields[i]
		for j := range kvs {
			if string(f.Key) == kvs[j].key {
				f.Value = append(append(f.Value[:0], kvs[j].s...), kvs[j].b...)
				done |= 1 << j
				break
			}
		}
	}
	for j := range kvs {
		if done&(1<<j) != 0 {
			continue
		}
		n := len(e.Fields)
		if n < cap(e.Fields) {
			e.Fields = e.Fields[:n+1]
		} else {
			e.Fields = append(e.Fields, relaykit.Field{})
		}
		f := &e.Fields[n]
		f.Key = append(f.Key[:0], kvs[j].key...)
		f.Value = append(append(f.Value[:0], kvs[j].s...), kvs[j].b...)
	}
}

// lookup fills the part of rec that this file's kind provides.
func (f *geoFile) lookup(ip netip.Addr, kind int, rec *GeoRecord) (bool, error) {
	var off uintptr
	if f.v4 != nil && ip.Is4() {
		o := f.v4.lookup(ipv4Bits(ip))
		if o == noRecord {
			return false, nil
		}
		off = uintptr(o)
	} else {
		res := f.reader.Lookup(ip)
		if err := res.Err(); err != nil {
			return false, err
		}
		if !res.Found() {
			return false, nil
		}
		off = res.Offset()
	}
	if f.recs != nil {
		if e := f.recs.getRecord(off); e != nil {
			e.fill(rec, kind)
			return true, nil
		}
	}
	d := getDecoder()
	defer putDecoder(d)
	d.kind = kind
	d.strs = f.strs
	if err := f.reader.LookupOffset(off).Decode(d); err != nil {
		return false, err
	}
	if f.recs != nil {
		f.recs.putRecord(off, kind, &d.rec, d.country, d.sub)
	}
	mergeRecord(rec, &d.rec, kind)
	return true, nil
}

// mergeRecord copies the fields of kind from src to dst.
func mergeRecord(dst, src *GeoRecord, kind int) {
	if kind == kindASN {
		dst.ASN = src.ASN
		dst.ASOrg = src.ASOrg
		return
	}
	asn, org := dst.ASN, dst.ASOrg
	*dst = *src
	dst.ASN, dst.ASOrg = asn, org
}

// Reload checks each database file for a change (modification time, size
// or identity, as when a new file is renamed over the old one) and reopens
// the changed ones. It reports whether it swapped in a new database. On
// error the previous databases stay in use. Reload is safe to call
// concurrently with lookups and with itself.
//
// Replace database files by renaming a complete new file over the old one
// (as geoipupdate does); a file rewritten in place is memory-mapped and its
// readers could see a half-written database.
func (g *GeoIP) Reload() (bool, error) {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	if g.closed.Load() {
		return false, ErrClosed
	}
	old := g.cur.Load()
	next := *old
	changed := false
	var errs []error
	reload := func(f **geoFile, kind int) {
		if *f == nil {
			return
		}
		info, err := os.Stat((*f).path)
		if err != nil {
			errs = append(errs, fmt.Errorf("enrich: check GeoIP database: %w", err))
			return
		}
		if sameFile((*f).info, info) {
			return
		}
		nf, err := g.open((*f).path, kind)
		if err != nil {
			errs = append(errs, err)
			return
		}
		g.log.Info("enrich: GeoIP database reloaded", "path", nf.path,
			"type", nf.reader.Metadata.DatabaseType, "build_time", nf.build)
		*f = nf
		changed = true
	}
	reload(&next.city, kindCity)
	reload(&next.asn, kindASN)
	if changed {
		next.addrs = newAddrTable(g.cfg.AddressCacheSlots)
		g.cur.Store(&next)
		g.reloads.Add(1)
	}
	if err := errors.Join(errs...); err != nil {
		g.reloadErrors.Add(1)
		g.log.Warn("enrich: GeoIP reload failed, keeping the previous database", "error", err)
		return changed, err
	}
	return changed, nil
}

// sameFile reports whether a and b describe the same unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Run checks the files for changes every CheckInterval and reloads them,
// until ctx is done; then it returns nil. Reload errors are counted and
// logged, and the previous databases stay in use. Run starts no goroutine;
// run it in one you own (e.g. under errgroup). Without Run, call
// [GeoIP.Reload] when you know the files changed.
func (g *GeoIP) Run(ctx context.Context) error {
	t := time.NewTicker(g.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := g.Reload(); errors.Is(err, ErrClosed) {
				return nil
			}
		}
	}
}

// Stats returns a snapshot of the counters.
func (g *GeoIP) Stats() GeoStats {
	s := GeoStats{
		Lookups:      g.lookups.load(),
		Found:        g.found.load(),
		Errors:       g.errors.Load(),
		Reloads:      g.reloads.Load(),
		ReloadErrors: g.reloadErrors.Load(),
	}
	if dbs := g.cur.Load(); dbs != nil {
		if dbs.city != nil {
			s.CityBuildTime = dbs.city.build
		}
		if dbs.asn != nil {
			s.ASNBuildTime = dbs.asn.build
		}
	}
	return s
}

// Close stops lookups: later ones find nothing, and Reload returns
// [ErrClosed]. The memory maps are released by the Go runtime once lookups
// still running have finished. Close is idempotent and returns nil.
func (g *GeoIP) Close() error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	g.closed.Store(true)
	g.cur.Store(nil)
	return nil
}
