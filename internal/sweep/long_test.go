package sweep

import "testing"

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): sweeps of several seconds each under cgroup limits
// and with repeats, which would make the README's `go test ./...` take
// minutes. The quick set keeps a sweep of each launcher.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long end-to-end test: go test -tags long runs it (.ci/run does)")
	}
}
