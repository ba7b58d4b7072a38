package main

import "strings"

// destOption is a destination setting and the destination types that use
// it. A setting that a destination's type does not use would do nothing;
// the config is rejected instead, with a message that says so.
type destOption struct {
	name    string
	set     func(d *DestinationConfig) bool
	types   string // the types that use it, space-separated
	tlsOnly bool   // syslog uses it only with network: tls
}

var destOptions = []destOption{
	{name: "dir", set: func(d *DestinationConfig) bool { return d.Dir != "" }, types: "archive"},
	{name: "format", set: func(d *DestinationConfig) bool { return d.Format != "" }, types: "archive"},
	{name: "max_size", set: func(d *DestinationConfig) bool { return d.MaxSize != 0 }, types: "archive"},
	{name: "fsync", set: func(d *DestinationConfig) bool { return d.Fsync }, types: "archive"},
	{name: "url", set: func(d *DestinationConfig) bool { return d.URL != "" }, types: "hec"},
	{name: "token", set: func(d *DestinationConfig) bool { return d.Token != "" }, types: "hec"},
	{name: "index", set: func(d *DestinationConfig) bool { return d.Index != "" }, types: "hec"},
	{name: "sourcetype", set: func(d *DestinationConfig) bool { return d.SourceType != "" }, types: "hec"},
	{name: "gzip", set: func(d *DestinationConfig) bool { return d.Gzip != nil }, types: "hec sentinel"},
	{name: "endpoint", set: func(d *DestinationConfig) bool { return d.Endpoint != "" }, types: "sentinel"},
	{name: "dcr_immutable_id", set: func(d *DestinationConfig) bool { return d.DCRImmutableID != "" }, types: "sentinel"},
	{name: "stream", set: func(d *DestinationConfig) bool { return d.Stream != "" }, types: "sentinel"},
	{name: "tenant_id", set: func(d *DestinationConfig) bool { return d.TenantID != "" }, types: "sentinel"},
	{name: "client_id", set: func(d *DestinationConfig) bool { return d.ClientID != "" }, types: "sentinel"},
	{name: "client_secret", set: func(d *DestinationConfig) bool { return d.ClientSecret != "" }, types: "sentinel"},
	{name: "authority_host", set: func(d *DestinationConfig) bool { return d.AuthorityHost != "" }, types: "sentinel"},
	{name: "scope", set: func(d *DestinationConfig) bool { return d.Scope != "" }, types: "sentinel"},
	{name: "columns", set: func(d *DestinationConfig) bool { return d.Columns != (ColumnsConfig{}) }, types: "sentinel"},
	{name: "table", set: func(d *DestinationConfig) bool { return d.Table != "" }, types: "sentinel"},
	{name: "collector_host_name", set: func(d *DestinationConfig) bool { return d.CollectorHostName != "" }, types: "sentinel"},
	{name: "custom_columns", set: func(d *DestinationConfig) bool { return len(d.CustomColumns) != 0 }, types: "sentinel"},
	{name: "indexed_fields", set: func(d *DestinationConfig) bool { return d.IndexedFields != nil }, types: "hec"},
	{name: "omit_fields", set: func(d *DestinationConfig) bool { return d.OmitFields }, types: "hec"},
	{name: "spool", set: func(d *DestinationConfig) bool { return d.Spool != (DestSpoolConfig{}) }, types: "hec sentinel syslog"},
	{name: "queue", set: func(d *DestinationConfig) bool { return d.Queue != 0 }, types: "hec sentinel syslog"},
	{name: "network", set: func(d *DestinationConfig) bool { return d.Network != "" }, types: "syslog"},
	{name: "address", set: func(d *DestinationConfig) bool { return d.Address != "" }, types: "syslog"},
	{name: "ca_file", set: func(d *DestinationConfig) bool { return d.CAFile != "" }, types: "hec sentinel syslog", tlsOnly: true},
	{name: "insecure_skip_verify", set: func(d *DestinationConfig) bool { return d.InsecureSkipVerify }, types: "hec sentinel syslog", tlsOnly: true},
	{name: "timeout", set: func(d *DestinationConfig) bool { return d.Timeout != 0 }, types: "hec sentinel syslog"},
	{name: "concurrency", set: func(d *DestinationConfig) bool { return d.Concurrency != 0 }, types: "hec sentinel"},
	{name: "retry.max_attempts", set: func(d *DestinationConfig) bool { return d.Retry.MaxAttempts != 0 }, types: "hec sentinel syslog"},
	{name: "retry.max_elapsed", set: func(d *DestinationConfig) bool { return d.Retry.MaxElapsed != 0 }, types: "hec sentinel syslog"},
	{name: "retry.initial_backoff", set: func(d *DestinationConfig) bool { return d.Retry.InitialBackoff != 0 }, types: "hec sentinel syslog"},
	{name: "retry.max_backoff", set: func(d *DestinationConfig) bool { return d.Retry.MaxBackoff != 0 }, types: "hec sentinel syslog"},
}

// checkApplies reports, through bad, every setting of d (at field f) that
// d's type does not use. Unknown types are reported elsewhere.
func checkApplies(f string, d DestinationConfig, bad func(field, format string, args ...any)) {
	switch d.Type {
	case "archive", "hec", "sentinel", "syslog":
	default:
		return
	}
	for _, o := range destOptions {
		if !o.set(&d) {
			continue
		}
		types := strings.Fields(o.types)
		uses := false
		for _, t := range types {
			uses = uses || t == d.Type
		}
		switch {
		case !uses:
			list := strings.Join(types, ", ")
			if i := strings.LastIndex(list, ", "); i >= 0 {
				list = list[:i] + " or " + list[i+2:]
			}
			bad(f+"."+o.name, "is set, but %s destinations do not use it (only %s destinations do)", d.Type, list)
		case o.tlsOnly && d.Type == "syslog" && d.Network != "tls":
			bad(f+"."+o.name, "is set, but syslog destinations use it only with network: tls (network is %s)", d.Network)
		}
	}
}
