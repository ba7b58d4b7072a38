// Package bench holds isolated benchmarks of the relaykit primitives against
// Go channels, common Go idioms and named peer libraries, plus the load
// generator and receivers for end-to-end relay runs.
//
// It is its own module so that the peers it compares against never enter the
// module graph of relaykit's users. Run it with
//
//	go test -run '^$' -bench . -cpu 2 -count 10 ./... | tee new.txt
//	benchstat new.txt
//
// BENCHMARKS.md at the repository root records the commands, the machine and
// the results.
package bench
