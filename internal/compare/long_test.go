package compare_test

import "testing"

// long skips t unless the long tests were asked for (go test -tags long,
// as .ci/run does): comparisons of runs repeated for seconds, which would
// make the README's `go test ./...` take minutes. The quick set keeps one
// comparison of real runs.
func long(t *testing.T) {
	t.Helper()
	if !longTests {
		t.Skip("a long end-to-end test: go test -tags long runs it (.ci/run does)")
	}
}
