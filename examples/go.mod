module github.com/relaykit/relaykit/examples

go 1.25.9

require github.com/relaykit/relaykit v0.0.0

replace github.com/relaykit/relaykit => ../
