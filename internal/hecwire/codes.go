// Package hecwire holds what the Splunk HTTP Event Collector receiver
// (stream/hec) and the fake HEC server of forward/forwardtest share: the
// status codes with their HTTP statuses and texts, and the decoder of the
// /services/collector/event body, so the two read HEC requests alike.
//
// Sources: Splunk, "Troubleshoot HTTP Event Collector" (status codes) and
// "Format events for HTTP Event Collector" (event format), Getting Data In
// manual.
package hecwire

// HEC status codes, as Splunk documents them and returns them in
// {"text": ..., "code": ...} bodies.
const (
	Success             = 0
	TokenDisabled       = 1
	TokenRequired       = 2
	InvalidAuthz        = 3
	InvalidToken        = 4
	NoData              = 5
	InvalidDataFormat   = 6
	IncorrectIndex      = 7
	InternalError       = 8
	ServerBusy          = 9
	ChannelMissing      = 10
	InvalidChannel      = 11
	EventRequired       = 12
	EventBlank          = 13
	AckDisabled         = 14
	IndexedFieldsError  = 15
	QueryStringDisabled = 16
	Healthy             = 17
	UnhealthyQueuesFull = 18
	UnhealthyAck        = 19
	UnhealthyQueueHigh  = 20

	// NumCodes is one more than the highest code.
	NumCodes = 21
)

var codes = [NumCodes]struct {
	status int
	text   string
}{
	Success:             {200, "Success"},
	TokenDisabled:       {403, "Token disabled"},
	TokenRequired:       {401, "Token is required"},
	InvalidAuthz:        {401, "Invalid authorization"},
	InvalidToken:        {403, "Invalid token"},
	NoData:              {400, "No data"},
	InvalidDataFormat:   {400, "Invalid data format"},
	IncorrectIndex:      {400, "Incorrect index"},
	InternalError:       {500, "Internal server error"},
	ServerBusy:          {503, "Server is busy"},
	ChannelMissing:      {400, "Data channel is missing"},
	InvalidChannel:      {400, "Invalid data channel"},
	EventRequired:       {400, "Event field is required"},
	EventBlank:          {400, "Event field cannot be blank"},
	AckDisabled:         {400, "ACK is disabled"},
	IndexedFieldsError:  {400, "Error in handling indexed fields"},
	QueryStringDisabled: {400, "Query string authorization is not enabled"},
	Healthy:             {200, "HEC is healthy"},
	UnhealthyQueuesFull: {503, "HEC is unhealthy, queues are full"},
	UnhealthyAck:        {503, "HEC is unhealthy, ack service unavailable"},
	UnhealthyQueueHigh:  {503, "HEC is unhealthy, queue utilization is high"},
}

// Status returns the HTTP status and text HEC sends with code, and false
// for an unknown code.
func Status(code int) (status int, text string, ok bool) {
	if code < 0 || code >= NumCodes {
		return 0, "", false
	}
	c := codes[code]
	return c.status, c.text, true
}

// AppendReply appends the body {"text":"...","code":N} HEC sends with
// code, leaving the closing brace off when open is set so the caller can
// add members (",\"ackId\":7", ",\"invalid-event-number\":3"). code must be
// known.
func AppendReply(dst []byte, code int, open bool) []byte {
	dst = append(dst, `{"text":"`...)
	dst = append(dst, codes[code].text...)
	dst = append(dst, `","code":`...)
	if code >= 10 {
		dst = append(dst, byte('0'+code/10))
	}
	dst = append(dst, byte('0'+code%10))
	if !open {
		dst = append(dst, '}')
	}
	return dst
}

// IsChannel reports whether s has the form of a channel identifier: a
// GUID, 8-4-4-4-12 hexadecimal digits (HEC answers code 11, "Invalid data
// channel", otherwise).
func IsChannel(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
