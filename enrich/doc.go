// Package enrich adds information to events: IP addresses found in raw
// bytes, GeoIP and ASN data from MaxMind DB files, and values looked up by
// key in an external store (memcached) or a static table, behind a
// concurrent cache.
//
// Everything on the per-event path is lock-free and does not allocate once
// warm: extracting an address, a GeoIP lookup, and a cache hit. A slow or
// failed backend never stalls the pipeline for longer than its timeout, and
// its failures are counted and turn into "no data".
//
// # IP extraction
//
// [FirstIPv4], [FirstIP], [IndexIP] and [AppendIPs] scan raw bytes (no
// regular expressions) for IPv4 and IPv6 addresses and return
// [netip.Addr] values. An address must stand alone: "10.0.0.300", "1.2.3"
// and "1.2.3.4.5" hold none, while "1.2.3.4:80", "[2001:db8::1]:443" and
// "client=10.0.0.1," each hold one. [JSONPath] reads an address (or any
// value) from a JSON document with pooled fastjson parsers and a size cap;
// [EventIP] and [Source] read from an event field or the raw message.
//
// # GeoIP and ASN
//
// [OpenGeoIP] opens a City database and/or an ASN database in the MaxMind
// DB format and [GeoIP.Lookup] returns a small [GeoRecord]: country ISO
// code and name, first subdivision, city, latitude/longitude, AS number
// and organisation. Names are the English ("en") ones. An IPv4 address
// finds its record through an index of the database's IPv4 networks that
// opening the file builds with maxminddb-golang's network iterator (a
// probe by /16 and a binary search, instead of some 23 dependent loads
// through the search tree); an IPv6 address walks the tree. The decoder
// walks the record with the cursor API of maxminddb-golang/v2 and reads
// only those fields: a place (city, country, subdivision) only up to its
// English name, the other languages neither decoded nor walked. Strings
// and shared places are kept in a table keyed by their offset in the file,
// decoded records in a table keyed by the record's offset (many networks
// share one record), and merged results of both databases in a table
// keyed by address (log traffic repeats addresses), so a warm lookup does
// not allocate, a new address whose record is known costs the index (or
// tree walk) and a probe, and a repeated address skips both. All three
// tables are lock-free and of a fixed size set in [GeoConfig] (the record
// and address tables 4-way set-associative, the string table
// direct-mapped), which bounds their memory; a reload builds the index and
// starts the tables afresh.
//
// Editions that work: GeoLite2-City, GeoIP2-City and GeoIP2-Enterprise (all
// fields), GeoLite2-Country and GeoIP2-Country (country fields only) as the
// City database; GeoLite2-ASN (and GeoIP2-ISP, whose records carry the same
// autonomous_system_* keys) as the ASN database. OpenGeoIP checks the
// database_type in the file's metadata and refuses a file of the wrong
// kind. Any other file in the same schema works, such as one written with
// github.com/maxmind/mmdbwriter, which the tests and examples use.
//
// GeoLite2 databases are free from MaxMind (https://www.maxmind.com) after
// creating an account and accepting the GeoLite2 End User License
// Agreement (https://www.maxmind.com/en/geolite2/eula); download them with
// a license key, for example with geoipupdate, which MaxMind updates
// twice a week (GeoLite2 weekly). The EULA incorporates the Creative Commons
// Attribution-ShareAlike 4.0 International License: if you redistribute
// the data or show it, attribute it ("This product includes GeoLite2 data
// created by MaxMind, available from https://www.maxmind.com") and pass
// the same terms on. The EULA also requires keeping the data up to date
// (deleting old copies) and forbids using it to identify or locate
// specific people or households. This package ships no database; GeoIP2
// databases are commercial products under their own licence.
//
// # Reload
//
// [GeoIP.Reload] checks each file's identity, size and modification time
// and, when one changed, opens the new file, checks and indexes it (in
// the goroutine that calls Reload, a few tenths of a second of CPU for
// GeoLite2-City, while lookups go on with the old file), and swaps it in
// with one atomic pointer store; lookups never take a lock. Lookups
// already running keep using the old reader, which stays mapped until no
// lookup references it; the Go runtime then unmaps it (the reader's
// cleanup). [GeoIP.Run] calls Reload every CheckInterval until its context
// ends. Install a new database by renaming a complete file over the old
// one (geoipupdate does): a file rewritten in place is memory-mapped and
// could be read half-written. A failed reload keeps the old database,
// counts the error and logs it.
//
// # Keyed lookups
//
// A [Lookup] maps a key to a value. [Memcached] asks memcached servers
// with a per-request timeout; [Table] is a static map, e.g. loaded from
// CSV with [LoadCSV]. [Cache] sits in front of any Lookup (it uses
// github.com/maypok86/otter/v2: lock-free reads, W-TinyLFU eviction,
// per-entry expiry) with a size bound, a TTL, negative caching of missing
// keys, a short memory of failures so a down backend costs one timeout per
// key per ErrorTTL rather than one per event, and hit/miss/error counters.
// Concurrent misses of one key make one backend call.
//
// # Enrichers
//
// [Enricher] is the interface a pipeline runs ([EnricherFunc] adapts a
// function, [Chain] runs several in order). [GeoEnricher] reads an address
// from a [Source] and writes fields named by [GeoFields] (by default
// src_geo_country, src_geo_city, src_asn, src_as_org, ...);
// [LookupEnricher] reads a key and writes the looked-up value to a target
// field. Both have Stats, and Name and Apply(*relaykit.Event) (keep bool,
// err error) methods that make them pipeline.Function values (package
// pipeline matches them by method set; this package does not import it);
// [NewStep] gives any Enricher that form. In a pipeline an enricher never
// drops an event: finding nothing leaves it unchanged, and an error (a
// closed database) is returned with keep=true, counted and passed on.
//
// # Concurrency and ownership
//
// GeoIP, Cache, Memcached, Table and the enrichers are safe for concurrent
// use by multiple goroutines. Enrichers mutate the event in place and keep
// nothing of it. Values returned by a Lookup are read-only and shared.
// Cache owns two goroutines (its clock and its periodic clean-up), stopped
// by Close, and runs policy maintenance on short-lived goroutines; nothing
// else starts a goroutine, and GeoIP reloads run in whichever goroutine
// calls Run or Reload.
package enrich
