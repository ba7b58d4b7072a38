module github.com/relaykit/relaykit

go 1.25.9

require (
	github.com/stretchr/testify v1.12.1
	github.com/valyala/fastjson v1.6.4
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
