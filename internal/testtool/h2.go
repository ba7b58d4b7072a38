package testtool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// H2 is a raw HTTP/2 client connection speaking gRPC's framing, for tests
// that send what a well-behaved client never would: an Export's headers
// without its message, a message cut short or trickled. Writes are
// serialised (the reader acknowledges SETTINGS and PINGs as a client
// must); reads belong to one goroutine at a time.
type H2 struct {
	c    net.Conn
	mu   sync.Mutex // guards w, enc, hbuf
	w    *http2.Framer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	r    *http2.Framer
}

// NewH2 writes the HTTP/2 client preface and an empty SETTINGS frame on c
// and returns the client.
func NewH2(c net.Conn) (*H2, error) {
	h := &H2{c: c, w: http2.NewFramer(c, nil), r: http2.NewFramer(nil, c)}
	h.enc = hpack.NewEncoder(&h.hbuf)
	h.r.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		return nil, err
	}
	if err := h.w.WriteSettings(); err != nil {
		return nil, err
	}
	return h, nil
}

// Headers opens stream id as a gRPC call of path (such as
// "/opentelemetry.proto.collector.logs.v1.LogsService/Export") with the
// metadata md (pairs of lower-case name, value), without ending it.
func (h *H2) Headers(id uint32, path string, md ...string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hbuf.Reset()
	fields := append([]string{":method", "POST", ":scheme", "http", ":path", path, ":authority", "relay",
		"content-type", "application/grpc", "te", "trailers"}, md...)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := h.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]}); err != nil {
			return err
		}
	}
	return h.w.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.hbuf.Bytes(), EndHeaders: true})
}

// Data writes b on stream id in one DATA frame, ending the stream with
// end.
func (h *H2) Data(id uint32, b []byte, end bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.WriteData(id, end, b)
}

// GRPCMessage returns msg in gRPC's length-prefixed framing
// (uncompressed).
func GRPCMessage(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// H2End is how a stream or connection ended, as [H2.Wait] saw it.
type H2End struct {
	// GRPCStatus is the grpc-status of the stream's trailers ("" if
	// none), Message its grpc-message.
	GRPCStatus, Message string
	// Reset is set when the server reset the stream (RSTCode).
	Reset   bool
	RSTCode http2.ErrCode
	// GoAway counts the GOAWAY frames read.
	GoAway int
	// Closed is set when the server closed the connection (EOF or a
	// reset read) before anything else ended the wait.
	Closed bool
	// Data counts the bytes of DATA frames read on the stream (a
	// response message).
	Data int
	// MaxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS, if a
	// SETTINGS frame read set it.
	MaxStreams uint32
}

// ErrH2Timeout is returned by [H2.Wait] when the deadline passed first.
var ErrH2Timeout = errors.New("testtool: HTTP/2 wait timed out")

// Wait reads frames until stream id ends (trailers, or RST_STREAM) or,
// for id 0, until the server closes the connection, and at most until
// deadline. It acknowledges SETTINGS and PINGs as they come.
func (h *H2) Wait(id uint32, deadline time.Time) (H2End, error) {
	var end H2End
	_ = h.c.SetReadDeadline(deadline)
	defer func() { _ = h.c.SetReadDeadline(time.Time{}) }()
	for {
		f, err := h.r.ReadFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return end, ErrH2Timeout
			}
			end.Closed = true
			return end, nil
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
				end.MaxStreams = v
			}
			if !f.IsAck() {
				h.mu.Lock()
				err = h.w.WriteSettingsAck()
				h.mu.Unlock()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				h.mu.Lock()
				err = h.w.WritePing(true, f.Data)
				h.mu.Unlock()
			}
		case *http2.GoAwayFrame:
			end.GoAway++
		case *http2.DataFrame:
			if f.StreamID == id {
				end.Data += len(f.Data())
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == id && f.StreamEnded() {
				for _, hf := range f.Fields {
					switch hf.Name {
					case "grpc-status":
						end.GRPCStatus = hf.Value
					case "grpc-message":
						end.Message = hf.Value
					}
				}
				return end, nil
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				end.Reset, end.RSTCode = true, f.ErrCode
				return end, nil
			}
		}
		if err != nil { // a write failed: the server closed the connection
			end.Closed = true
			return end, nil
		}
	}
}

// Reset resets stream id (RST_STREAM CANCEL), as a client that gives up
// on a call does.
func (h *H2) Reset(id uint32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.WriteRSTStream(id, http2.ErrCodeCancel)
}
