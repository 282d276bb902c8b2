package dashboard

import "testing"

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): a search watched in a browser for the seconds it
// runs.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long end-to-end test: go test -tags long runs it (.ci/run does)")
	}
}
