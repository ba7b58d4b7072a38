package tap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrUnauthorized is wrapped by the error [Tail] returns when the server
// answers 401: the token is missing or wrong.
var ErrUnauthorized = errors.New("tap: unauthorized")

// Record is one event of a tap stream as a client reads it: the object
// [AppendJSON] writes, decoded. Absent keys leave their zero values.
type Record struct {
	Point             string            `json:"point"`
	Outcome           string            `json:"outcome"`
	Reason            string            `json:"reason"`
	Permanent         bool              `json:"permanent"`
	ReceiveTime       time.Time         `json:"receive_time"`
	Time              time.Time         `json:"time"`
	TimeIsReceiveTime bool              `json:"time_is_receive_time"`
	Host              string            `json:"host"`
	Source            string            `json:"source"`
	SourceType        string            `json:"sourcetype"`
	Index             string            `json:"index"`
	Facility          string            `json:"facility"`
	FacilityCode      *int              `json:"facility_code"` // nil: no syslog priority
	Severity          string            `json:"severity"`
	SeverityCode      *int              `json:"severity_code"`
	PriorityAssumed   bool              `json:"priority_assumed"`
	Message           string            `json:"message"`
	MessageBase64     []byte            `json:"message_base64"` // the raw bytes, when Message could not carry them
	Fields            map[string]string `json:"fields"`
	// JSON is the object as received.
	JSON json.RawMessage `json:"-"`
}

// ReadStream reads a tap stream from r, NDJSON or server-sent events, and
// calls fn with each record, in order. It returns nil at the end of r,
// fn's error if fn returns one, or an error for a line that is not a
// record. The Record and its JSON are fn's to keep.
func ReadStream(r io.Reader, fn func(*Record) error) error {
	br := bufio.NewReader(r)
	var data []byte // SSE data lines of the current event
	emit := func(line []byte) error {
		rec := &Record{JSON: bytes.Clone(line)}
		if err := json.Unmarshal(rec.JSON, rec); err != nil {
			return fmt.Errorf("tap: bad record: %w", err)
		}
		return fn(rec)
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0: // SSE: end of an event
				if len(data) > 0 {
					if e := emit(data); e != nil {
						return e
					}
					data = data[:0]
				}
			case line[0] == '{': // NDJSON
				if e := emit(line); e != nil {
					return e
				}
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, v...)
			}
			// Other SSE lines (comments, event:, id:, retry:) carry nothing.
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tap: read stream: %w", err)
		}
	}
}

var tailClient = sync.OnceValue(func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t}
})

// Tail requests a tap stream from rawURL (a [Handler]'s URL with its
// query, such as http://127.0.0.1:9100/api/tap?at=input:udp&limit=10),
// with "Authorization: Bearer <token>" when token is not empty, and reads
// it with [ReadStream] until it ends, ctx is done, or fn returns an error.
// A nil c means a client whose only timeout is 30 seconds for the response
// headers (the stream itself may last as long as ctx does). A status other
// than 200 is an error that carries the server's message; 401 wraps
// [ErrUnauthorized].
func Tail(ctx context.Context, c *http.Client, rawURL, token string, fn func(*Record) error) error {
	if c == nil {
		c = tailClient()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	req.Header.Set("Accept", "application/x-ndjson")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("%w (%s)", ErrUnauthorized, resp.Status)
		}
		return fmt.Errorf("tap: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	err = ReadStream(resp.Body, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
