package dest

import (
	"cmp"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
)

// NetworkSettings are what the hec, sentinel and syslog destinations
// share: the queue, in-memory retries, a write or request timeout and TLS
// verification.
type NetworkSettings struct {
	config.QueueSettings `yaml:",inline"`
	Retry                config.RetryConfig `yaml:"retry"`
	Timeout              time.Duration      `yaml:"timeout"`
	CAFile               string             `yaml:"ca_file"`
	InsecureSkipVerify   bool               `yaml:"insecure_skip_verify"`
}

func (n *NetworkSettings) ValidateNetwork(f string, ck *config.Checker, spool *config.SpoolConfig) {
	n.QueueSettings.Validate(f, ck, spool)
	r := &n.Retry
	r.MaxAttempts = cmp.Or(r.MaxAttempts, 10)
	r.MaxElapsed = cmp.Or(r.MaxElapsed, 2*time.Second)
	r.InitialBackoff = cmp.Or(r.InitialBackoff, 200*time.Millisecond)
	r.MaxBackoff = cmp.Or(r.MaxBackoff, time.Second)
	if r.MaxAttempts < 0 || r.MaxElapsed < 0 || r.InitialBackoff < 0 || r.MaxBackoff < 0 {
		ck.Bad(f+".retry", "values must not be negative")
	}
}

func (n *NetworkSettings) QueueConfig() (*config.QueueSettings, config.RetryConfig) {
	return &n.QueueSettings, n.Retry
}
