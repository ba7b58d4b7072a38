package forwardtest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// postRows posts body to srv's stream and returns the status and the
// error body's code and message.
func postRows(t *testing.T, srv *forwardtest.DCRServer, body string) (int, string, string) {
	t.Helper()
	c := srv.Config()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/dataCollectionRules/"+c.DCRImmutableID+"/streams/"+c.Stream+"?api-version=2023-01-01",
		strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+dcrToken(t, srv))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusNoContent {
		assert.Equal(t, e.Error.Code, resp.Header.Get("x-ms-error-code"))
	}
	return resp.StatusCode, e.Error.Code, e.Error.Message
}

func TestDCRServerTableSchemas(t *testing.T) {
	const ts = `"TimeGenerated":"2026-11-23T09:00:00.0000000Z"`
	tests := []struct {
		name    string
		stream  string
		columns map[string]string
		body    string
		status  int
		msg     string
	}{
		{"syslog row", "Microsoft-Syslog", nil,
			`[{` + ts + `,"Computer":"h","HostName":"h","Facility":"auth","SeverityLevel":"err","SyslogMessage":"m","ProcessID":42,"EventTime":"2026-11-23T08:00:00Z"}]`,
			204, ""},
		{"null values", "Microsoft-Syslog", nil, `[{` + ts + `,"ProcessID":null,"HostIP":null}]`, 204, ""},
		{"unknown column", "Microsoft-Syslog", nil, `[{` + ts + `},{` + ts + `,"RawData":"m"}]`,
			400, "The data does not match the schema of stream 'Microsoft-Syslog': record 1: column 'RawData' is not in the schema of the stream."},
		{"int column given a string", "Microsoft-Syslog", nil, `[{` + ts + `,"ProcessID":"42"}]`,
			400, `record 0: column 'ProcessID' of type 'int' has an invalid value: "42"`},
		{"int column beyond 32 bits", "Microsoft-CommonSecurityLog", nil, `[{` + ts + `,"DestinationPort":4294967296}]`,
			400, "column 'DestinationPort' of type 'int' has an invalid value: 4294967296"},
		{"long column", "Microsoft-CommonSecurityLog", nil, `[{` + ts + `,"ReceivedBytes":4294967296,"FieldDeviceCustomNumber1":-1}]`, 204, ""},
		{"real column given a fraction", "Microsoft-CommonSecurityLog", nil, `[{` + ts + `,"DeviceCustomFloatingPoint1":0.5}]`, 204, ""},
		{"int column given a fraction", "Microsoft-CommonSecurityLog", nil, `[{` + ts + `,"SourcePort":1.5}]`,
			400, "column 'SourcePort' of type 'int' has an invalid value: 1.5"},
		{"datetime not RFC 3339", "Microsoft-CommonSecurityLog", nil, `[{` + ts + `,"StartTime":"Nov 23 2026 09:00:00"}]`,
			400, "column 'StartTime' of type 'datetime' has an invalid value"},
		{"TimeGenerated missing", "Microsoft-Syslog", nil, `[{"SyslogMessage":"m"}]`, 400, "column 'TimeGenerated' is required"},
		{"reserved column", "Microsoft-Syslog", nil, `[{` + ts + `,"Type":"Syslog"}]`, 400, "column 'Type' is not in the schema"},
		{"added _CF column", "Microsoft-Syslog", map[string]string{"MsgID_CF": forwardtest.TypeString},
			`[{` + ts + `,"MsgID_CF":"LOGIN"}]`, 204, ""},
		{"custom stream without columns is not checked", "Custom-RelayKit", nil, `[{"Anything":1}]`, 204, ""},
		{"declared custom stream", "Custom-T", map[string]string{"TimeGenerated": "datetime", "N": "int"},
			`[{` + ts + `,"N":"x"}]`, 400, "column 'N' of type 'int' has an invalid value"},
		{"bad Columns: no _CF on a built-in table", "Microsoft-Syslog", map[string]string{"MsgID": "string"},
			`[{` + ts + `}]`, 500, `forwardtest: DCRServerConfig.Columns: column "MsgID": a column added to a built-in table must end in _CF`},
		{"bad Columns: unknown type", "Custom-T", map[string]string{"N": "integer"},
			`[{` + ts + `}]`, 500, `column "N": unknown type "integer"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: tt.stream, Columns: tt.columns})
			status, code, msg := postRows(t, srv, tt.body)
			require.Equal(t, tt.status, status, msg)
			if tt.status == 204 {
				assert.NotEmpty(t, srv.Rows())
				return
			}
			assert.Contains(t, msg, tt.msg)
			if tt.status == 400 {
				assert.Equal(t, "InvalidPayload", code)
			}
			assert.Empty(t, srv.Rows(), "a refused request stores no row")
		})
	}
}

func TestTableColumns(t *testing.T) {
	syslog := forwardtest.TableColumns("Syslog")
	for col, typ := range map[string]string{
		"TimeGenerated": "datetime", "EventTime": "datetime", "Computer": "string", "HostName": "string", "HostIP": "string",
		"Facility": "string", "SeverityLevel": "string", "SyslogMessage": "string", "ProcessName": "string", "ProcessID": "int",
	} {
		assert.Equal(t, typ, syslog[col], col)
	}
	csl := forwardtest.TableColumns("CommonSecurityLog")
	for col, typ := range map[string]string{
		"DeviceVendor": "string", "DeviceEventClassID": "string", "Activity": "string", "LogSeverity": "string",
		"AdditionalExtensions": "string", "SourcePort": "int", "ReceivedBytes": "long", "SentBytes": "long",
		"DeviceCustomFloatingPoint4": "real", "FieldDeviceCustomNumber3": "long", "DeviceCustomString6Label": "string",
		"StartTime": "datetime", "ExtID": "string", "ExternalID": "int",
	} {
		assert.Equal(t, typ, csl[col], col)
	}
	assert.Nil(t, forwardtest.TableColumns("SecurityEvent"))
	syslog["X"] = "string" // a copy
	assert.NotContains(t, forwardtest.TableColumns("Syslog"), "X")
}
