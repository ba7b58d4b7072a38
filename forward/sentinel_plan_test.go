package forward_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// auxColumns declares the custom table sentinelFor's rows fill, without a
// dynamic column, as an Auxiliary table must.
var auxColumns = map[string]string{
	"TimeGenerated": forwardtest.TypeDatetime, "RawData": forwardtest.TypeString, "Computer": forwardtest.TypeString,
	"App": forwardtest.TypeString, "Facility": forwardtest.TypeInt, "SeverityLevel": forwardtest.TypeInt,
	"UserName": forwardtest.TypeString, "n": forwardtest.TypeString,
}

func auxServer(t *testing.T, cols map[string]string) *forwardtest.DCRServer {
	return forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{
		Stream: "Custom-Aux_CL", Plan: forwardtest.PlanAuxiliary, Columns: cols,
	})
}

var sixDigits = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// TestSentinelAuxiliaryPlan: with Plan Auxiliary the sink writes
// TimeGenerated with exactly 6 fractional digits (the event time
// truncated to the microsecond), and a stand-in that has the Auxiliary
// plan accepts every row.
func TestSentinelAuxiliaryPlan(t *testing.T) {
	srv := auxServer(t, auxColumns)
	var fl failureLog
	s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) { c.Plan = forward.SentinelAuxiliary })
	sendEvents(t, s, &fl, 0, 300, 0)
	require.Zero(t, fl.count(), "%v", fl.messages)
	rows := srv.Rows()
	require.Len(t, rows, 300)
	for i, row := range rows {
		e := sentinelEvent(i, 0)
		tg := row["TimeGenerated"].(string)
		require.Regexp(t, sixDigits, tg)
		want := time.Unix(0, e.Time).UTC().Truncate(time.Microsecond)
		got, err := time.Parse(time.RFC3339Nano, tg)
		require.NoError(t, err)
		require.True(t, want.Equal(got), "row %d: %s, want %s", i, tg, want)
		for col, v := range row {
			require.NotContains(t, []string{"{", "["}, v, col)
		}
	}
}

// TestDCRServerAuxiliaryRejects: the stand-in with the Auxiliary plan
// refuses, as the service does, TimeGenerated with 7 fractional digits
// (the Analytics encoding) and dynamic values (a Fields object), with 400
// InvalidPayload naming the record and column; the sink reports the rows
// rejected.
func TestDCRServerAuxiliaryRejects(t *testing.T) {
	t.Run("seven digits", func(t *testing.T) {
		srv := auxServer(t, auxColumns)
		var fl failureLog
		s := sentinelFor(t, srv, &fl, nil) // Analytics: 7 digits
		sendEvents(t, s, &fl, 0, 5, 0)
		assert.Empty(t, srv.Rows())
		require.Equal(t, 5, fl.count())
		assert.Equal(t, relaykit.ReasonRejected, fl.reasons[0])
		require.Len(t, fl.messages, 1)
		assert.Contains(t, fl.messages[0], "InvalidPayload: The data does not match the schema of stream 'Custom-Aux_CL': record 0: column 'TimeGenerated' has an invalid value")
		assert.Contains(t, fl.messages[0], "ISO 8601 format with 6 decimal places")
	})
	t.Run("dynamic value", func(t *testing.T) {
		srv := auxServer(t, nil) // no declared columns: only the plan's rules
		var fl failureLog
		s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) {
			c.Columns.Fields = "Fields" // a dynamic column, which the sink refuses with Plan Auxiliary
		})
		sendEvents(t, s, &fl, 0, 3, 0)
		assert.Empty(t, srv.Rows())
		require.Equal(t, 3, fl.count())
		require.Len(t, fl.messages, 1)
		// TimeGenerated is wrong too (7 digits): the stand-in names the
		// first problem it finds.
		assert.Contains(t, fl.messages[0], "InvalidPayload")
	})
	t.Run("dynamic value, right time", func(t *testing.T) {
		srv := auxServer(t, nil)
		c := srv.Config()
		// A hand-written request: the sink cannot be configured to send
		// a dynamic value to an Auxiliary table.
		body := `[{"TimeGenerated":"2026-05-06T07:08:09.123456Z","Props":{"a":"b"}}]`
		status, msg := postRows(t, srv, c, body)
		assert.Equal(t, 400, status)
		assert.Contains(t, msg, "record 0: column 'Props' holds dynamic data, which a table with the Auxiliary plan does not support")
		status, _ = postRows(t, srv, c, `[{"TimeGenerated":"2026-05-06T07:08:09.123456Z","Props":"b"}]`)
		assert.Equal(t, 204, status)
		status, msg = postRows(t, srv, c, `[{"TimeGenerated":"2026-05-06T07:08:09.123Z"}]`)
		assert.Equal(t, 400, status)
		assert.Contains(t, msg, "6 decimal places")
		status, msg = postRows(t, srv, c, `[{"RawData":"x"}]`)
		assert.Equal(t, 400, status)
		assert.Contains(t, msg, "column 'TimeGenerated' is required")
	})
	t.Run("invalid server config", func(t *testing.T) {
		for _, tc := range []struct {
			cfg  forwardtest.DCRServerConfig
			want string
		}{
			{forwardtest.DCRServerConfig{Stream: "Custom-Aux_CL", Plan: forwardtest.PlanAuxiliary,
				Columns: map[string]string{"Props": forwardtest.TypeDynamic}}, `column "Props": a table with the Auxiliary plan has no dynamic columns`},
			{forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog", Plan: forwardtest.PlanAuxiliary}, "only custom tables"},
			{forwardtest.DCRServerConfig{Plan: "Archive"}, `plan "Archive"`},
		} {
			srv := forwardtest.NewDCRServer(t, tc.cfg)
			status, msg := postRows(t, srv, srv.Config(), `[{"TimeGenerated":"2026-05-06T07:08:09.123456Z"}]`)
			assert.Equal(t, 500, status)
			assert.Contains(t, msg, tc.want)
		}
	})
}

// postRows sends body to srv's stream with a token it issued and returns
// the status and error message.
func postRows(t *testing.T, srv *forwardtest.DCRServer, c forwardtest.DCRServerConfig, body string) (int, string) {
	t.Helper()
	tok, _, err := entraFor(t, srv, "").Token(t.Context())
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		srv.URL+"/dataCollectionRules/"+c.DCRImmutableID+"/streams/"+c.Stream+"?api-version=2023-01-01", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, ""
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &e), "%s", b.String())
	return resp.StatusCode, e.Error.Code + ": " + e.Error.Message
}

// TestSentinelPlanConfigErrors: the Auxiliary plan is for custom tables
// without a dynamic column.
func TestSentinelPlanConfigErrors(t *testing.T) {
	base := func() forward.SentinelConfig {
		return forward.SentinelConfig{
			Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
			Stream: "Custom-T_CL", TokenSource: forward.StaticToken("t"), Plan: forward.SentinelAuxiliary,
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(*forward.SentinelConfig)
		want string
	}{
		{"fields column", func(c *forward.SentinelConfig) { c.Columns.Fields = "Props" },
			`Columns.Fields: "Props": an Auxiliary table has no dynamic columns`},
		{"built-in table", func(c *forward.SentinelConfig) { c.Table, c.Stream = forward.SentinelCommonSecurityLog, "" },
			"the Auxiliary plan is for custom tables only, not the CommonSecurityLog table"},
		{"unknown plan", func(c *forward.SentinelConfig) { c.Plan = 7 }, "Plan: unknown plan SentinelPlan(7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mod(&c)
			_, err := forward.NewSentinel(c)
			require.ErrorIs(t, err, forward.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	c := base()
	c.Columns.Fields = "-"
	_, err := forward.NewSentinel(c)
	assert.NoError(t, err, `Fields "-" (left out) is fine`)
	assert.Equal(t, "Analytics Basic Auxiliary", strings.Join([]string{
		forward.SentinelAnalytics.String(), forward.SentinelBasic.String(), forward.SentinelAuxiliary.String()}, " "))
}

// TestSentinelBasicPlanSameRows: the Basic plan is a property of the
// table, not of the stream: a CommonSecurityLog sink with Plan Basic
// writes byte for byte the rows of one with Analytics, and a stand-in
// whose table has the Basic plan accepts them.
func TestSentinelBasicPlanSameRows(t *testing.T) {
	batch := []relaykit.Event{
		cefEv(t, 134, "2026-11-23T09:00:00.1234567Z", "fw", "CEF:0|...", [7]string{"0", "Acme", "Wall", "1.0", "100", "deny", "5"},
			"src", "10.0.0.1", "dst", "10.0.0.2", "dpt", "22", "act", "deny", "cnt", "41", "first_seen", "2026-11-23T09:00:00Z"),
		cefEv(t, 134, "2026-11-23T09:00:01Z", "fw", "CEF:0|...", [7]string{"0", "Acme", "Wall", "1.0", "200", "accept", "3"},
			"src", "10.0.0.3", "dpt", "443", "out", "12345", "in", "99"),
	}
	analytics := tableSink(t, forward.SentinelCommonSecurityLog, nil)
	basic := tableSink(t, forward.SentinelCommonSecurityLog, func(c *forward.SentinelConfig) { c.Plan = forward.SentinelBasic })
	for i := range batch {
		assert.Equal(t, string(analytics.AppendEvent(nil, &batch[i])), string(basic.AppendEvent(nil, &batch[i])))
	}

	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog", Plan: forwardtest.PlanBasic})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) {
		c.Table, c.Stream, c.Columns, c.Fields, c.Plan = forward.SentinelCommonSecurityLog, "", forward.SentinelColumns{}, nil, forward.SentinelBasic
	})
	require.NoError(t, fl.send(t, s, batch))
	require.Zero(t, fl.count(), "%v", fl.messages)
	rows := srv.Rows()
	require.Len(t, rows, 2)
	assert.Equal(t, "2026-11-23T09:00:00.1234567Z", rows[0]["TimeGenerated"], "7 digits on a Basic table")
	assert.Equal(t, "41", rows[0]["EventCount"].(interface{ String() string }).String())
	assert.Equal(t, "Basic", srv.Config().Plan)
}

// TestDCRServerDiscardRows: with DiscardRows the stand-in checks and
// counts rows but keeps none; WireBytes is the gzipped body's size.
func TestDCRServerDiscardRows(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{DiscardRows: true})
	s := sentinelFor(t, srv, nil, nil)
	sendEvents(t, s, nil, 0, 500, 200)
	assert.Empty(t, srv.Rows())
	reqs := srv.Requests()
	require.NotEmpty(t, reqs)
	rows, wire, body := 0, 0, 0
	for _, r := range reqs {
		rows += r.Rows
		wire += r.WireBytes
		body += r.BodyBytes
		assert.True(t, r.Gzip)
		assert.Less(t, r.WireBytes, r.BodyBytes, "gzip shrinks the body")
	}
	assert.Equal(t, 500, rows)
	st := s.Stats()
	assert.Equal(t, st.WireBytes, int64(wire), "the sink's count of bytes on the wire")
	assert.Equal(t, st.BytesSent, int64(body), "the sink's count of uncompressed bytes")
}
