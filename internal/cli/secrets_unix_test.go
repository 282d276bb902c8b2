//go:build unix

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secrets under names the built-in lists do not hold: query keys and
// headers whose names say "token" or "signature", a password inside a URL
// of the target's command, and --password or --x-token arguments of it.
// None reaches result.json, Markdown, HTML, JUnit, stdout or stderr.
func TestSecretsByOtherNamesStayOut(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 0)
	dir := t.TempDir()
	out, page, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "j.xml")
	target := strings.Replace(srv.URL, "http://", "http://alice:S1PW@", 1) +
		"/x?token=S5T&X-Amz-Signature=S6SIG&access-token=S7AT&private_token=S8PT&page=2"
	cmd := "sh -c 'sleep 30' postgres://app:S19PG@db.local/app --password S20PW --api-token=S21TK"
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", target, "--rate", "20", "--step", "500ms", "--warmup", "0s",
		"--header", "PRIVATE-TOKEN: S11PT", "--header", "X-Vendor-Token: S10VT", "--monitor-cmd", cmd,
		"--out", out, "--md", "--html", page, "--junit", junit)
	if code != ExitOK && code != ExitThreshold {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	for name, path := range map[string]string{"result.json": out, "report.html": page, "junit.xml": junit} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(data)
	}
	for name, text := range texts {
		for _, s := range []string{"S1PW", "S5T", "S6SIG", "S7AT", "S8PT", "S10VT", "S11PT", "S19PG", "S20PW", "S21TK"} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", name, s)
			}
		}
	}
	if !strings.Contains(stderr, "started") || !strings.Contains(stderr, "--password <redacted>") {
		t.Errorf("stderr does not say which command it started, redacted:\n%s", stderr)
	}
	if !strings.Contains(texts["result.json"], "page=2") {
		t.Errorf("result.json lost the query's ordinary parameter page=2")
	}
}
