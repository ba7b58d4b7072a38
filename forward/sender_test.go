package forward

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/relaykit/relaykit/internal/jsonenc"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

// arrayServer accepts JSON array bodies (the Sentinel framing), records the
// messages, and answers with the statuses queued in fail.
type arrayServer struct {
	mu     sync.Mutex
	fail   []int
	bodies int
	msgs   []string
	max    int // 413 above this many uncompressed bytes; 0 = none
}

func (a *arrayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bodies++
	if len(a.fail) > 0 {
		st := a.fail[0]
		a.fail = a.fail[1:]
		w.WriteHeader(st)
		return
	}
	if a.max > 0 && len(b) > a.max {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	var rows []struct{ Msg string }
	if err := json.Unmarshal(b, &rows); err != nil {
		w.WriteHeader(400)
		return
	}
	for _, r := range rows {
		a.msgs = append(a.msgs, r.Msg)
	}
	w.WriteHeader(http.StatusNoContent)
}

func arrayProtocol(url string, reauths *int) protocol {
	var mu sync.Mutex
	return protocol{
		url: url, contentType: "application/json",
		prefix: []byte("["), separator: []byte(","), suffix: []byte("]"),
		encode: func(dst []byte, e *relaykit.Event) ([]byte, error) {
			dst = append(dst, `{"Msg":`...)
			dst = jsonenc.AppendString(dst, e.Raw)
			return append(dst, '}'), nil
		},
		classify: func(r *response) verdict {
			if r.Status == http.StatusUnauthorized {
				mu.Lock()
				*reauths++
				mu.Unlock()
				return verdict{outcome: outcomeReauth, code: -1, ackID: -1, err: errTest}
			}
			return classifyHTTP(r)
		},
	}
}

var errTest = &SendError{Destination: "test", Code: -1}

func newTestBatch(n int) []relaykit.Event {
	b := make([]relaykit.Event, n)
	for i := range b {
		b[i].Raw = []byte{byte('a' + i%26), byte('0' + i/26%10), byte('0' + i/260%10)}
	}
	return b
}

func TestSenderArrayFramingAndSplit(t *testing.T) {
	srv := &arrayServer{max: 100}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var reauths int
	s, err := newSender("test", HTTPConfig{MaxRequestBytes: 400, Concurrency: 1},
		arrayProtocol(ts.URL, &reauths), 1<<20, 1<<20)
	require.NoError(t, err)
	defer s.close()
	batch := newTestBatch(100) // 100 × 14 bytes + framing: 4 requests of ≤ 400 bytes
	require.NoError(t, s.send(t.Context(), batch))
	want := make([]string, len(batch))
	for i := range batch {
		want[i] = string(batch[i].Raw)
	}
	assert.Equal(t, want, srv.msgs, "all arrived, once, in order")
	st := s.stats()
	assert.Equal(t, int64(100), st.EventsSent)
	assert.Positive(t, st.Splits, "413 above 100 bytes forced splits")
}

func TestSenderReauthOnceThenUnauthorized(t *testing.T) {
	tests := []struct {
		name     string
		fail     []int
		reauths  int
		arrived  int
		reason   string
		requests int
	}{
		{"401 once, then accepted", []int{401}, 1, 3, "", 2},
		{"401 twice is permanent", []int{401, 401}, 2, 0, relaykit.ReasonUnauthorized, 2},
		{"400 is rejected", []int{400}, 0, 0, relaykit.ReasonRejected, 1},
		{"403 is unauthorized", []int{403}, 0, 0, relaykit.ReasonUnauthorized, 1},
		{"408 retryable, not retried", []int{408}, 0, 0, relaykit.ReasonSinkError, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &arrayServer{fail: tt.fail}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			var reauths int
			s, err := newSender("test", HTTPConfig{}, arrayProtocol(ts.URL, &reauths), 1<<20, 1<<20)
			require.NoError(t, err)
			defer s.close()
			err = s.send(t.Context(), newTestBatch(3))
			assert.Equal(t, tt.reauths, reauths)
			assert.Len(t, srv.msgs, tt.arrived)
			if tt.reason == "" {
				require.NoError(t, err)
			} else {
				var be *relaykit.BatchError
				require.ErrorAs(t, err, &be)
				require.Len(t, be.Failed, 1)
				f := be.Failed[0]
				assert.Equal(t, tt.reason, f.Reason)
				assert.Equal(t, [2]int{0, 3}, [2]int{f.From, f.To})
				assert.Equal(t, permanent(tt.reason), f.Permanent)
			}
			assert.Equal(t, tt.requests, srv.bodies)
		})
	}
}

func TestSenderRequestBufferNotPooledWhenOversized(t *testing.T) {
	s, err := newSender("test", HTTPConfig{MaxRequestBytes: 1000}, arrayProtocol("http://127.0.0.1:1", new(int)), 1<<20, 1<<20)
	require.NoError(t, err)
	r := s.getRequest()
	r.raw = make([]byte, 0, 10_000)
	s.putRequest(r)
	r2 := s.getRequest()
	assert.Less(t, cap(r2.raw), 10_000, "an oversized buffer is left to the GC")
}
