package relp

import (
	"bytes"
	"fmt"
)

// RELP frame limits (librelp doc/relp.md, "RELP FRAME"; src/relpframe.c).
const (
	relpMaxTxnr      = 999999999 // TXNR = 1*9DIGIT; after it comes 1
	relpMaxDigits    = 9
	relpMaxCommand   = 32 // COMMAND = 1*32ALPHA
	relpMaxHeader    = relpMaxDigits + 1 + relpMaxCommand + 1 + relpMaxDigits + 1
	relpCmdSyslog    = "syslog"
	relpCmdOpen      = "open"
	relpCmdClose     = "close"
	relpCmdRsp       = "rsp"
	relpServerClose  = "0 serverclose 0\n"
	relpRspOK        = "200 OK"
	relpSoftwareName = "relaykit"
)

// relpFrame is one parsed frame; cmd and data point into the buffer.
type relpFrame struct {
	txnr int
	cmd  []byte
	data []byte
}

// relpError is a frame that breaks the protocol: the connection is closed.
type relpError struct {
	tooLarge bool
	msg      string
}

func (e *relpError) Error() string { return e.msg }

func (e *relpError) Unwrap() error {
	if e.tooLarge {
		return ErrTooLarge
	}
	return ErrProtocol
}

// parseRELP parses the frame at the start of b:
//
//	TXNR SP COMMAND SP DATALEN [SP DATA] LF
//
// DATALEN 0 is followed directly by the trailer. It returns the frame and
// its length in bytes, n 0 (and no error) when b holds only the start of
// a frame, or an error for bytes that cannot start a valid frame (maxData
// bounds DATALEN).
func parseRELP(b []byte, maxData int) (f relpFrame, n int, err error) {
	i := 0
	// TXNR
	txnr, i, ok := relpNumber(b, i)
	if !ok {
		return f, 0, frameErr(b, i, "transaction number")
	}
	if i == len(b) {
		return f, 0, nil
	}
	if b[i] != ' ' || i == 0 {
		return f, 0, frameErr(b, i, "transaction number")
	}
	i++
	// COMMAND
	start := i
	for i < len(b) && (b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z') {
		if i-start == relpMaxCommand {
			return f, 0, frameErr(b, i, "command (more than 32 letters)")
		}
		i++
	}
	if i == len(b) {
		return f, 0, nil
	}
	if b[i] != ' ' || i == start {
		return f, 0, frameErr(b, i, "command")
	}
	cmd := b[start:i]
	i++
	// DATALEN
	start = i
	dataLen, i, ok := relpNumber(b, i)
	if !ok {
		return f, 0, frameErr(b, i, "data length")
	}
	if i == len(b) {
		return f, 0, nil
	}
	if i == start {
		return f, 0, frameErr(b, i, "data length")
	}
	if dataLen > maxData {
		return f, 0, &relpError{tooLarge: true, msg: fmt.Sprintf("RELP frame %d announces %d bytes of data, more than the %d allowed", txnr, dataLen, maxData)}
	}
	var data []byte
	if dataLen > 0 {
		if b[i] != ' ' {
			return f, 0, frameErr(b, i, "separator before the data")
		}
		i++
		if len(b)-i < dataLen+1 {
			return f, 0, nil
		}
		data = b[i : i+dataLen : i+dataLen]
		i += dataLen
	}
	if b[i] != '\n' {
		return f, 0, frameErr(b, i, "trailer (LF) after the data: the data length does not match the data")
	}
	return relpFrame{txnr: txnr, cmd: cmd, data: data}, i + 1, nil
}

// relpNumber reads 1 to 9 digits at b[i:]; ok is false for a tenth digit.
func relpNumber(b []byte, i int) (n, end int, ok bool) {
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if i-start == relpMaxDigits {
			return 0, i, false
		}
		n = n*10 + int(b[i]-'0')
		i++
	}
	return n, i, true
}

func frameErr(b []byte, i int, what string) error {
	lo := max(0, i-16)
	hi := min(len(b), i+16)
	return &relpError{msg: fmt.Sprintf("bad RELP frame: unexpected byte %q at offset %d in %s (near %q)", b[min(i, len(b)-1)], i, what, b[lo:hi])}
}

// relpNextTxnr returns the transaction number after t: 1 after 999999999.
func relpNextTxnr(t int) int {
	if t >= relpMaxTxnr {
		return 1
	}
	return t + 1
}

// relpOffers reads the offers of an open command ("name=value,value" per
// line) and returns the relp_version offered (-1 when absent or not a
// number) and whether the commands offer holds syslog.
func relpOffers(data []byte) (version int, syslog bool) {
	version = -1
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		name, value, _ := bytes.Cut(line, []byte("="))
		switch string(name) {
		case "relp_version":
			v, end, ok := relpNumber(value, 0)
			if ok && end == len(value) && end > 0 {
				version = v
			}
		case "commands":
			for c := range bytes.SplitSeq(value, []byte(",")) {
				if string(c) == relpCmdSyslog {
					syslog = true
				}
			}
		}
	}
	return version, syslog
}

// appendRsp appends an rsp frame for txnr carrying data.
func appendRsp(dst []byte, txnr int, data string) []byte {
	dst = appendInt(dst, txnr)
	dst = append(dst, " rsp "...)
	dst = appendInt(dst, len(data))
	if len(data) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, data...)
	}
	return append(dst, '\n')
}

func appendInt(dst []byte, n int) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}
