package outputs

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// json=FILE writes a line per second and one per finished step: the
// seconds of a step add up to its counts, in time order, and each step
// line is the step of result.json.
func TestJSONLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "live.jsonl")
	res, o := runWith(t, target(t), &Flags{Outputs: []string{"json=" + path}}, time.Second, hooks{}, 50, 100)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	completed := map[int]int64{}
	steps := 0
	var last time.Time
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", n, err, sc.Bytes())
		}
		switch kind.Type {
		case "second":
			var l SecondLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			if l.RunID != o.RunID() || l.T.Before(last) || l.Completed != l.OK+l.Failed+l.Limited {
				t.Errorf("line %d: %s", n, sc.Bytes())
			}
			if !l.Warming && l.Completed > 0 && (l.P99 == nil || *l.P99 < 2) {
				t.Errorf("line %d: a counted second without a p99 of at least the 2 ms answer: %s", n, sc.Bytes())
			}
			last = l.T
			completed[l.Step] += l.Completed
		case "step":
			var l StepLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			want := res.Steps[steps]
			if l.RunID != o.RunID() || l.Step == nil || l.Step.Index != want.Index || l.Step.Completed != want.Completed || completed[want.Index] != want.Completed {
				t.Errorf("line %d: step %+v; result.json's completed %d, its seconds' %d", n, l.Step, want.Completed, completed[want.Index])
			}
			steps++
		default:
			t.Errorf("line %d: type %q", n, kind.Type)
		}
	}
	if steps != 2 || !allArrivals(&res.Steps[0], 50) || !allArrivals(&res.Steps[1], 100) {
		t.Errorf("%d step lines (want 2); completed %d, %d, not sent %d, %d (want 50, 100 between them)", steps,
			res.Steps[0].Completed, res.Steps[1].Completed, res.Steps[0].NotSent, res.Steps[1].NotSent)
	}
}
