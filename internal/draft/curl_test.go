package draft

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// parsed checks that a draft is a plan: it parses and validates, or its
// only problems are its TODOs and the variables it reads that are not set.
func parsed(t *testing.T, d *Draft) *plan.Plan {
	t.Helper()
	p, err := plan.Parse("plan.yaml", d.YAML)
	if err != nil {
		t.Fatalf("the draft is not a valid plan: %v\n%s", err, d.YAML)
	}
	return p
}

func TestCurlIssueExample(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"to": "+15550001", "text": "hello", "password": "hunter2", "n": 1.50}`), 0o644)
	d, err := FromCurl([]Source{{Name: "--curl 1", Dir: dir, Text: `curl -X POST https://api.example.test/v1/send -H "Authorization: Bearer abc.def.ghi" -d @body.json`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", d.YAML)
	for _, secret := range []string{"abc.def.ghi", "hunter2"} {
		if strings.Contains(string(d.YAML), secret) {
			t.Errorf("the plan holds the secret %q", secret)
		}
	}
	t.Setenv("CEILING_AUTHORIZATION", "x")
	t.Setenv("CEILING_PASSWORD", "y")
	parsed(t, d)
}
