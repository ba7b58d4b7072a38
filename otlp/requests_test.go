package otlp_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/codes"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// TestExporterRequestsToReceiver: requests encoded ahead and sent later
// (as a delivery queue stores them) reach the receiver as Send's do, over
// every protocol, gzipped or not; cut and decoded, they hold the same
// events.
func TestExporterRequestsToReceiver(t *testing.T) {
	in := otlp.Mapping{}.AppendEvents(nil, richLogs(otlp.SpecNames), 1)
	in = append(in, syslogEvents(t)...)
	for _, proto := range []otlp.Protocol{otlp.HTTPProtobuf, otlp.HTTPJSON, otlp.GRPC} {
		for _, plain := range []bool{false, true} {
			sink := &collectSink{}
			r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "tok"})
			require.NoError(t, err)
			endpoint := ""
			if proto == otlp.GRPC {
				endpoint = "http://" + serveGRPC(t, r)
			} else {
				srv := httptest.NewServer(r)
				defer srv.Close()
				endpoint = srv.URL
			}
			x := newExporter(t, otlp.ExporterConfig{Endpoint: endpoint, Protocol: proto, Token: "tok", DisableGzip: plain, MaxRequestBytes: 2048})
			reqs, err := x.EncodeRequests(nil, in)
			require.NoError(t, err)
			require.Greater(t, len(reqs), 1, "split at MaxRequestBytes")
			n := 0
			for _, rq := range reqs {
				n += rq.Events
				assert.Equal(t, !plain, len(rq.Format) > 5 && rq.Format[len(rq.Format)-5:] == "+gzip", rq.Format)
			}
			require.Equal(t, len(in), n)
			require.NoError(t, x.SendRequests(t.Context(), reqs))
			got := sink.got()
			require.Len(t, got, len(in))
			for i := range in {
				assert.Equal(t, viewOf(&in[i]), viewOf(&got[i]), "protocol %d event %d", proto, i)
			}
			// Decoded and cut.
			var dec []relaykit.Event
			for i := range reqs {
				dec, err = x.DecodeRequest(dec, &reqs[i])
				require.NoError(t, err)
			}
			require.Len(t, dec, len(in))
			for i := range in {
				assert.Equal(t, viewOf(&in[i]), viewOf(&dec[i]), "decoded: protocol %d event %d", proto, i)
			}
			if reqs[0].Events > 1 {
				cut, err := x.CutRequest(&reqs[0], 1, reqs[0].Events)
				require.NoError(t, err)
				part, err := x.DecodeRequest(nil, &cut)
				require.NoError(t, err)
				require.Len(t, part, reqs[0].Events-1)
				assert.Equal(t, viewOf(&in[1]), viewOf(&part[0]))
			}
		}
	}
}

// TestExporterRequestsClassification: failures of stored requests are
// reported by position through the requests, as Send reports them: a
// retryable answer fails its request and every later one (not sent); a
// partial success rejects the last records of its request.
func TestExporterRequestsClassification(t *testing.T) {
	partial := plogotlp.NewExportResponse()
	partial.PartialSuccess().SetRejectedLogRecords(1)
	calls := 0
	f := &fakeGRPC{answer: func() (plogotlp.ExportResponse, error) {
		calls++
		switch calls {
		case 1:
			return partial, nil
		case 2:
			return plogotlp.NewExportResponse(), retryStatus(codes.Unavailable, 0)
		}
		return plogotlp.NewExportResponse(), nil
	}}
	x := newExporter(t, otlp.ExporterConfig{Endpoint: "http://" + serveFake(t, f), Protocol: otlp.GRPC})
	var reqs []relaykit.Request
	for range 3 {
		var err error
		reqs, err = x.EncodeRequests(reqs, events(4))
		require.NoError(t, err)
	}
	require.Len(t, reqs, 3)
	be := batchErr(t, x.SendRequests(t.Context(), reqs))
	require.Len(t, be.Failed, 2)
	assert.Equal(t, []int{3, 4}, []int{be.Failed[0].From, be.Failed[0].To})
	assert.True(t, be.Failed[0].Permanent)
	assert.Equal(t, []int{4, 12}, []int{be.Failed[1].From, be.Failed[1].To})
	assert.False(t, be.Failed[1].Permanent)
	assert.Equal(t, 2, calls, "nothing sent after a retryable answer")
}
