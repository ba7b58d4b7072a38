module github.com/relaykit/relaykit/bench

go 1.25.9

require github.com/relaykit/relaykit v0.0.0

require github.com/valyala/fastjson v1.6.4 // indirect
require (
	golang.org/x/net v0.47.0 // indirect
	golang.org/x/oauth2 v0.33.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
)

	github.com/klauspost/compress v1.18.0
	golang.org/x/sync v0.17.0 // indirect
	github.com/agilira/go-timecache v1.0.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1
)

replace github.com/relaykit/relaykit => ../
