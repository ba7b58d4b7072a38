// Package cli is the relay's command line: Main parses the flags and
// runs the service (SIGHUP reloads), or a subcommand: `relay test`
// (package configtest), `relay tap` and `relay top` (clients of the
// operator API).
package cli
