package forwardtest_test

import (
	"testing"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// A test file runs the conformance suite against a sink: newSink returns
// the sink, pointed at a fresh destination, and a way to read what that
// destination received. Here the sink is forward.HEC and the destination
// the fake HEC server; a sink of your own passes its own receiver.
func ExampleTestSink() {
	// In a _test.go file: func TestHECConformance(t *testing.T) { ... }
	testHECConformance := func(t *testing.T) {
		forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
			srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
			hec, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = hec.Close() })
			return forwardtest.SinkHarness{
				Sink:     hec,
				Received: func(int) []string { return srv.Messages() },
			}
		})
	}
	_ = testHECConformance
}
