// Package examples holds runnable programs built from the relaykit packages.
// agent/ is a small agent (JSON lines to Splunk HEC and a rotating archive)
// to copy as the start of one's own; relay/ is a complete syslog relay meant
// to be copied as the start of a production service.
//
// It is its own module so that the relay's dependencies (YAML, syslog
// parsing, Prometheus) never enter the module graph of relaykit's users.
package examples
