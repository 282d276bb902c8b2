package draft

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// A recording of thousands of endpoints drafts a plan that validate
// takes (at most plan.MaxPlanBytes): the most frequent endpoints, and a
// note of how many were left out.
func TestHARManyEndpointsCapped(t *testing.T) {
	var entries []map[string]any
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3000 {
		// Endpoint /e/i is called 1 time, but the first 20 are called 5 times.
		n := 1
		if i < 20 {
			n = 5
		}
		for range n {
			entries = append(entries, entryOf(at.Format(time.RFC3339Nano), "GET", "https://h.test/e"+strconv.Itoa(i)+"/items?page=1&sort=name&filter="+strings.Repeat("x", 100), nil, "", 200, nil, "application/json", `{}`))
			at = at.Add(time.Second)
		}
	}
	d, err := FromHAR("many.har", harOf(t, entries...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.YAML) > plan.MaxPlanBytes || d.Scenarios > maxScenarios {
		t.Errorf("%d scenarios, %d bytes: want at most %d scenarios and %d bytes", d.Scenarios, len(d.YAML), maxScenarios, plan.MaxPlanBytes)
	}
	p := parsed(t, d)
	for _, sc := range p.Scenarios[:20] {
		if sc.Weight != 5 {
			t.Errorf("scenario %s of weight %v among the first: want the most frequent first", sc.Name, sc.Weight)
		}
	}
	notes := strings.Join(d.Notes, "\n")
	if want := fmt.Sprintf("Left out %d endpoints", 3000-d.Scenarios); !strings.Contains(notes, want) {
		t.Errorf("notes %q, want them to say %q", d.Notes, want)
	}
}

// A document of thousands of operations drafts a plan validate takes.
func TestOpenAPIManyOperationsCapped(t *testing.T) {
	var paths []string
	for i := range 3000 {
		paths = append(paths, fmt.Sprintf(`"/resource%d/{id}": {"get": {"operationId": "getResource%d", "summary": "Reads resource %d, its items and their history", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}, "example": 7}], "responses": {"200": {"description": "ok"}}}}`, i, i, i))
	}
	doc := writeDoc(t, t.TempDir(), "big.json", `{"openapi": "3.0.3", "info": {"title": "big", "version": "1"}, "servers": [{"url": "http://h.test"}], "paths": {`+strings.Join(paths, ",")+`}}`)
	d, err := FromOpenAPI(context.Background(), doc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.YAML) > plan.MaxPlanBytes || d.Scenarios > maxScenarios {
		t.Errorf("%d scenarios, %d bytes: want at most %d scenarios and %d bytes", d.Scenarios, len(d.YAML), maxScenarios, plan.MaxPlanBytes)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, fmt.Sprintf("Left out %d operations", 3000-d.Scenarios)) {
		t.Errorf("notes %q, want them to say how many operations were left out", d.Notes)
	}
	parsed(t, d)
}

// A large body is drafted into a file next to the plan (body_file), sent
// as its bytes; the plan stays small, and validates with the file there.
func TestLargeBodyToFile(t *testing.T) {
	dir := t.TempDir()
	body := `{"items":[` + strings.Repeat(`{"sku":"A-1","qty":2,"note":"a line of an order"},`, 6000) + `{"sku":"B-2"}]}`
	if err := os.WriteFile(filepath.Join(dir, "order.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := FromCurl(context.Background(), []Source{{Name: "c", Text: "curl https://h.test/orders -H 'Content-Type: application/json' --data-binary @order.json", Dir: dir}},
		Options{File: filepath.Join(dir, "plan.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.YAML) > 64<<10 || len(d.Files) != 1 {
		t.Fatalf("a %d-byte body: a %d-byte plan and %d files, want a small plan and the body in a file\n%.2000s", len(body), len(d.YAML), len(d.Files), d.YAML)
	}
	f := d.Files[0]
	if string(f.Data) != body || filepath.Dir(f.Name) != dir {
		t.Errorf("the body's file %s holds %d bytes, want the body's %d, next to the plan", f.Name, len(f.Data), len(body))
	}
	if err := os.WriteFile(f.Name, f.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, d.YAML, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.LoadFile(planFile)
	if err != nil {
		t.Fatalf("the plan with its body in a file: %v\n%s", err, d.YAML)
	}
	if got := p.Scenarios[0].Request.BodyFile; got != filepath.Base(f.Name) {
		t.Errorf("body_file %q, want %q, relative to the plan", got, filepath.Base(f.Name))
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), filepath.Base(f.Name)) {
		t.Errorf("the notes do not name the body's file: %q", d.Notes)
	}
}

// The draft's own bound is the plan's; a draft of long requests past it
// loses its last scenarios until it fits, and says so.
func TestDraftFitsThePlanLimit(t *testing.T) {
	if maxPlanBytes != plan.MaxPlanBytes {
		t.Fatalf("maxPlanBytes = %d, want plan.MaxPlanBytes (%d)", maxPlanBytes, plan.MaxPlanBytes)
	}
	var entries []map[string]any
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 150 {
		entries = append(entries, entryOf(at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), "GET",
			fmt.Sprintf("https://h.test/e%d?q=%s", i, strings.Repeat("y", 10<<10)), nil, "", 200, nil, "application/json", `{}`))
	}
	d, err := FromHAR("long.har", harOf(t, entries...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.YAML) > plan.MaxPlanBytes || d.Scenarios == 0 || d.Scenarios >= 150 {
		t.Errorf("%d scenarios, %d bytes: want some, in %d bytes", d.Scenarios, len(d.YAML), plan.MaxPlanBytes)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), fmt.Sprintf("Left out the last %d scenarios", 150-d.Scenarios)) {
		t.Errorf("notes %q", d.Notes)
	}
	parsed(t, d)
}
