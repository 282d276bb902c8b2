package agent

import "testing"

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): runs of several seconds each through agents (a search,
// an agent lost mid-step, a coordinator that died), which would make the
// README's `go test ./...` take minutes. The quick set keeps a run through
// agents of each kind of flag.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long end-to-end test: go test -tags long runs it (.ci/run does)")
	}
}
