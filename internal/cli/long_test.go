package cli

import "testing"

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): end-to-end runs of several seconds each (searches,
// repeats, agents, events, sweeps under cgroups), which would make the
// README's `go test ./...` take many minutes. The quick set keeps a short
// test of each of those paths.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long end-to-end test: go test -tags long runs it (.ci/run does)")
	}
}
