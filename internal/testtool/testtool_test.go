package testtool_test

import (
	"testing"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/stretchr/testify/assert"
)

func TestInCI(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}} {
		t.Setenv("CI", tc.v)
		assert.Equal(t, tc.want, testtool.InCI(), "CI=%q", tc.v)
	}
}

func TestNeedFindsGo(t *testing.T) {
	t.Setenv("CI", "true")
	assert.NotEmpty(t, testtool.Need(t, "go", "install Go"))
}
