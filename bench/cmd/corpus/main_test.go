package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, "daemons", 50, 3, 2000, "-"))
	assert.Equal(t, 50, strings.Count(out.String(), "\n"))

	f := filepath.Join(t.TempDir(), "fw.log")
	require.NoError(t, run(nil, "firewall", 10, 3, 2000, f))
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, 10, bytes.Count(b, []byte("CEF:0|Acme|NGFW|")))

	assert.ErrorContains(t, run(&out, "netflow", 1, 1, 1, "-"), `unknown -kind "netflow"`)
}
