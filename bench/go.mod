module github.com/relaykit/relaykit/bench

go 1.25.9

require github.com/relaykit/relaykit v0.0.0

require (
	github.com/agilira/go-timecache v1.0.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1
)

replace github.com/relaykit/relaykit => ../
