// Package testtool holds helpers for tests that need programs outside Go
// (memcached, syslog-ng, loggen, logger, openssl, kcat).
//
// Locally a test whose program is missing skips with an install hint. Under
// CI (the CI environment variable set to a non-empty value other than
// "false") it fails instead: a green CI run means every test ran.
package testtool

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// InCI reports whether the tests run under CI (CI set, and not "false").
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Need returns the path of the program name, found in PATH or at one of the
// paths given as alternatives. When it is missing the test is skipped with
// hint (for example "apt-get install memcached"), or failed under CI.
func Need(t testing.TB, name, hint string, alternatives ...string) string {
	t.Helper()
	for _, p := range alternatives {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	Missing(t, name+" not installed ("+hint+"; .ci/run installs it)")
	return ""
}

// Missing skips the test with msg, or fails it under CI, for a
// precondition other than a program (a second loopback address, say).
func Missing(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatal("CI: " + msg)
	}
	t.Skip(msg)
}

// Tmpfs mounts a tmpfs of size (a mount(8) size, such as "1m") on a new
// temporary directory, unmounted when the test ends, and returns the
// directory: a small disk to fill. Mounting needs root (CI runs as root);
// without it the test is skipped, or failed under CI.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		Missing(t, "mount tmpfs: "+err.Error()+" (needs root)")
		return dir
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// isolatedEnv names the test a child process started by Isolated runs.
const isolatedEnv = "RELAYKIT_TEST_ISOLATED"

// Isolated runs the calling test in a process of its own: in the test
// binary it starts the binary again with -test.run matching only t and
// returns false once that child has passed (failing t with the child's
// output otherwise); in the child it returns true and the caller runs its
// body. Use it for a test that changes process-wide state another test's
// leftovers could disturb: one that fills the descriptor table, say, where
// a connection an earlier test is still closing would free a descriptor
// mid-test.
//
//	if !testtool.Isolated(t) {
//		return
//	}
func Isolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		return true
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in its own process: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in its own process did not run:\n%s", t.Name(), out)
	}
	if testing.Verbose() {
		t.Logf("%s in its own process:\n%s", t.Name(), out)
	}
	return false
}
