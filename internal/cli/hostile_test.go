package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Credentials given on the command line or in a data file reach neither
// result.json, nor the reports, nor the terminal; a result that holds
// values of a data file is readable by its owner only.
func TestSecretsStayOutOfOutputs(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 0)
	dir := t.TempDir()
	out, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	target := strings.Replace(srv.URL, "http://", "http://alice:pw-URL-SECRET@", 1) + "/x?access_token=TOKEN-SECRET&page=2"
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", target, "--rate", "20", "--step", "500ms", "--warmup", "0s",
		"--header", "Authorization: Bearer HEADER-SECRET", "--header", "Cookie: sid=COOKIE-SECRET", "--out", out, "--md", "--html", page)
	if code != ExitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	result, _ := os.ReadFile(out)
	html, _ := os.ReadFile(page)
	for name, text := range map[string]string{"result.json": string(result), "report.html": string(html), "stdout": stdout, "stderr": stderr} {
		for _, s := range []string{"URL-SECRET", "TOKEN-SECRET", "HEADER-SECRET", "COOKIE-SECRET"} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", name, s)
			}
		}
	}
	if !strings.Contains(string(result), "Authorization: \\u003credacted\\u003e") && !strings.Contains(string(result), "Authorization: <redacted>") {
		t.Errorf("result.json's command does not say the header was redacted:\n%s", result)
	}

	users := filepath.Join(dir, "users.csv")
	os.WriteFile(users, []byte("email,password\na@x.test,PASSWORD-SECRET\n"), 0o600)
	plan := writePlan(t, fmt.Sprintf(`
target: %s
load: {rates: [20], step: 500ms, warmup: 0s}
data: {users: %s}
vars: {clientKey: "{{.user.password}}"}
scenarios: [{request: {url: "/?k={{.clientKey}}"}}]
`, srv.URL, users))
	code, _, stderr = ceiling(t, context.Background(), "run", plan, "--out", out, "--quiet")
	if code != ExitThreshold { // the data value repeats: a strict run's finding
		t.Fatalf("exit = %d, want 1; stderr:\n%s", code, stderr)
	}
	result, _ = os.ReadFile(out)
	if r := readResult(t, out); len(r.DuplicateIDs) == 0 || strings.Contains(string(result), "PASSWORD-SECRET") {
		t.Errorf("duplicates %+v: want the repeated data value noted, its example redacted", r.DuplicateIDs)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("result.json with data-file values has mode %v (err %v), want 0600", st.Mode().Perm(), err)
	}
}

// failing is a writer whose every write fails, as a full disk does.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that cannot be written is an error (exit 3), found before the run
// when it can be: a report into a missing folder stops the run before its
// first step, and a table or report that cannot be written is not exit 0.
func TestUnwritableOutputs(t *testing.T) {
	srv := delayServer(t, 0)
	dir := t.TempDir()
	start := time.Now()
	code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "10", "--step", "5s",
		"--out", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "missing", "r.html"), "--quiet")
	if code != ExitCannotRun || !strings.Contains(stderr, "missing") || time.Since(start) > 3*time.Second {
		t.Errorf("--html into a missing folder: exit %d after %v, stderr %q; want 3 at once, naming it", code, time.Since(start), stderr)
	}
	out := filepath.Join(dir, "r.json")
	if code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "10", "--step", "200ms", "--warmup", "0s", "--out", out, "--quiet"); code != ExitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	for _, format := range []string{"text", "md", "html"} {
		var errb bytes.Buffer
		if code := Main(context.Background(), []string{"report", out, "--format", format}, failing{}, &errb, nil); code != ExitCannotRun {
			t.Errorf("report --format %s to a full disk: exit %d (%s), want 3", format, code, errb.String())
		}
	}
}
