module github.com/relaykit/relaykit

go 1.25.9

require (
	github.com/agilira/go-timecache v1.0.3
	github.com/klauspost/compress v1.20.3
	github.com/stretchr/testify v1.12.1
	github.com/valyala/fastjson v1.6.4
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.17.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
