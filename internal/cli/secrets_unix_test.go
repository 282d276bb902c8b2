//go:build unix

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Credentials given on the command line reach none of what a run writes
// or prints: result.json, the Markdown table, the HTML report, JUnit,
// stdout and stderr. Under the built-in names (userinfo, access_token,
// Authorization, Cookie) and under names that only say what they are:
// query keys and headers whose names say "token" or "signature", a
// password inside a URL of the target's command, and --password or
// --x-token arguments of it. What is redacted says so, and what is not a
// secret (page=2) stays.
func TestSecretsStayOutOfOutputs(t *testing.T) {
	t.Parallel()
	srv := delayServer(t, 0)
	dir := t.TempDir()
	out, page, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "j.xml")
	target := strings.Replace(srv.URL, "http://", "http://alice:S1PW@", 1) +
		"/x?access_token=S2AT&token=S5T&X-Amz-Signature=S6SIG&access-token=S7AT&private_token=S8PT&page=2"
	cmd := "sh -c 'sleep 30' postgres://app:S19PG@db.local/app --password S20PW --api-token=S21TK"
	code, stdout, stderr := ceiling(t, context.Background(), "run", "--url", target, "--rate", "20", "--step", "500ms", "--warmup", "0s",
		"--header", "Authorization: Bearer S3AUTH", "--header", "Cookie: sid=S4COOKIE",
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
		for _, s := range []string{"S1PW", "S2AT", "S3AUTH", "S4COOKIE", "S5T", "S6SIG", "S7AT", "S8PT", "S10VT", "S11PT", "S19PG", "S20PW", "S21TK"} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", name, s)
			}
		}
	}
	if result := texts["result.json"]; !strings.Contains(result, "Authorization: \\u003credacted\\u003e") && !strings.Contains(result, "Authorization: <redacted>") {
		t.Errorf("result.json's command does not say the header was redacted:\n%s", result)
	}
	if !strings.Contains(stderr, "started") || !strings.Contains(stderr, "--password <redacted>") {
		t.Errorf("stderr does not say which command it started, redacted:\n%s", stderr)
	}
	if !strings.Contains(texts["result.json"], "page=2") {
		t.Errorf("result.json lost the query's ordinary parameter page=2")
	}
}
