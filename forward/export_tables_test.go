package forward

// Internals of the built-in table encoders, for tests.
var (
	IsJSONNumber = isJSONNumber
	ParseInt     = parseInt
	IsIPAddress  = isIPAddress
)
