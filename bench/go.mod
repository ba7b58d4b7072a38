module github.com/relaykit/relaykit/bench

go 1.25.9

require (
	github.com/bradfitz/gomemcache v0.0.0-20260422231931-4d751bb6e37c
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/maxmind/mmdbwriter v1.2.0
	github.com/maypok86/otter/v2 v2.4.0
	github.com/oschwald/geoip2-golang/v2 v2.3.0
	github.com/relaykit/relaykit v0.0.0
)

require (
	github.com/oschwald/maxminddb-golang/v2 v2.6.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go4.org/netipx v0.0.0-20231129151722-fdeea329fbba // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace github.com/relaykit/relaykit => ../
