package outputs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/report"
)

// Outside GitHub Actions (the variable unset or empty) nothing is
// written, not even into the working folder.
func TestAppendStepSummaryUnset(t *testing.T) {
	r := fixtures(t)["slo fails"]
	for _, set := range []bool{false, true} {
		dir := t.TempDir()
		t.Chdir(dir)
		t.Setenv(StepSummaryEnv, "")
		if !set {
			os.Unsetenv(StepSummaryEnv) // t.Setenv restores it after the test
		}
		if err := AppendStepSummary(r); err != nil {
			t.Errorf("AppendStepSummary (variable set to empty: %v) = %v, want nil", set, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("AppendStepSummary (variable set to empty: %v) wrote %v", set, entries)
		}
	}
}

// Each call appends the Markdown report and a blank line: what was in the
// file stays, and two calls append it twice.
func TestAppendStepSummary(t *testing.T) {
	r := fixtures(t)["slo fails"]
	path := filepath.Join(t.TempDir(), "summary.md")
	const before = "# earlier step\n\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(StepSummaryEnv, path)
	for range 2 {
		if err := AppendStepSummary(r); err != nil {
			t.Fatalf("AppendStepSummary: %v", err)
		}
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := before + md.String() + "\n" + md.String() + "\n"; string(got) != want {
		t.Errorf("summary file = %q, want what it held, then the report and a blank line twice: %q", got, want)
	}
	if n := strings.Count(string(got), "## checkout\n"); n != 2 {
		t.Errorf("summary file has the report's heading %d times, want 2", n)
	}
}

// A summary file that cannot be opened is an error naming the variable.
func TestAppendStepSummaryError(t *testing.T) {
	t.Setenv(StepSummaryEnv, filepath.Join(t.TempDir(), "missing", "summary.md"))
	err := AppendStepSummary(fixtures(t)["pass"])
	if err == nil || !strings.Contains(err.Error(), StepSummaryEnv) {
		t.Errorf("AppendStepSummary into a missing folder = %v, want an error naming %s", err, StepSummaryEnv)
	}
}

// A summary file that does not exist yet is created.
func TestAppendStepSummaryCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv(StepSummaryEnv, path)
	if err := AppendStepSummary(fixtures(t)["pass"]); err != nil {
		t.Fatalf("AppendStepSummary: %v", err)
	}
	if data, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(data), "## checkout\n") {
		t.Errorf("summary file = %.40q... (%v), want the report", data, err)
	}
}
