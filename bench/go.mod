module github.com/relaykit/relaykit/bench

go 1.26

require (
	github.com/Workiva/go-datastructures v1.1.7
	github.com/agilira/argus v1.1.0
	github.com/relaykit/relaykit v0.0.0
	github.com/smarty/go-disruptor v0.5.0
)

require (
	github.com/agilira/flash-flags v1.1.6 // indirect
	github.com/agilira/go-errors v1.1.1 // indirect
	github.com/agilira/go-timecache v1.0.2 // indirect
	github.com/mattn/go-sqlite3 v1.14.33 // indirect
)

replace github.com/relaykit/relaykit => ../
