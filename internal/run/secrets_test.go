package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A value of a data file (a password) sent in every request is a repeated
// value, a strict run's finding: result.json notes it without showing it,
// the run does not pass, and a result that holds values of a data file is
// readable by its owner only.
func TestDataFileValuesStayOwnersOnly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		users, out := filepath.Join(dir, "users.csv"), filepath.Join(dir, "result.json")
		if err := os.WriteFile(users, []byte("email,password\na@x.test,PASSWORD-SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := parsePlan(t, `
target: http://127.0.0.1:1
load: {rates: [20], step: 500ms, warmup: 0s}
data: {users: %s}
vars: {clientKey: "{{.user.password}}"}
scenarios: [{request: {url: "/?k={{.clientKey}}"}}]
`, users)
		res, err := runPlan(t, p, Options{Out: out, Exchanger: newServer(10, time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		written, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.DuplicateIDs) == 0 || res.Passed || strings.Contains(string(written), "PASSWORD-SECRET") {
			t.Errorf("duplicates %+v, passed %v; want the repeated data value noted, its example redacted, the run failed", res.DuplicateIDs, res.Passed)
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("result.json with data-file values has mode %v (err %v), want 0600", st.Mode().Perm(), err)
		}
	})
}
