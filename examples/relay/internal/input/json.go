package input

import (
	"fmt"

	libinput "github.com/relaykit/relaykit/input"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit"
)

// newJSONInput binds the JSON-lines input of in: its listener's
// connections are read by the library's JSON-lines input (package input):
// each LF-terminated line (at most max_line_size bytes) must be a valid
// JSON value; valid lines become events (Raw = the line, SourceType
// "json", the sender as the host), handed to the engine a read at a time;
// invalid or oversized lines are counted (dropped{invalid_json}) and
// written to the dead-letter file, never forwarded. With sources tracked,
// lines count for the connection's source (its address) and its rate
// limit applies as for syslog_tcp.
func newJSONInput(in *config.JSONInputConfig, env Env) (*StreamInput, error) {
	st := env.Ledger.Input(in.Name, in.Kind())
	l, err := ListenStream(in.Name, in.Listen, nil, in.MaxConnections, in.IdleTimeout, in.StreamLimits, st, env)
	if err != nil {
		return nil, err
	}
	lib, err := libinput.NewJSONLines(libinput.JSONLinesConfig{
		Name: in.Name, Input: st.In, MaxLineSize: int(in.MaxLineSize), SourceType: "json",
		ReadSize: int(in.ReadSize), ReadBudget: l.Budget,
		Sources: env.Sources.input(in.Name), DropOverLimit: env.Sources.drops(),
		DeadLetters: env.DeadLetter.Writer(), Logger: env.Log.With("input", in.Name),
	})
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("input %s: %w", in.Name, err)
	}
	// A line cut at max_line_size is refused (invalid, dead-lettered),
	// never forwarded cut: the ledger's truncated counts the frames
	// forwarded with FlagTruncated, so a JSON input has none.
	counts := func() libinput.Stats {
		s := lib.Stats()
		s.Truncated = 0
		return s
	}
	l.mount(lib.ServeConn, counts, lib.Close)
	// The engine's producers show the point each read's events, parsed.
	st.In.Observe(env.Taps.Point(tapInput + in.Name))
	return l, nil
}

// fillJSONEvent makes ev (reset first) the event of a valid JSON line
// from peer.
func FillJSONEvent(ev *relaykit.Event, line []byte, peer string) {
	ev.Reset()
	ev.Raw = append(ev.Raw, line...)
	ev.Host = append(ev.Host, peer...)
	ev.SourceType = append(ev.SourceType, "json"...)
}
