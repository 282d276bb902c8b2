//go:build unix

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The demo's second act (demo --events): a step with the chat backend
// restarted 3 s in; the restart is an event of the result, with its cost,
// and every message the target acked is accounted for at the sink. (A
// 12-second step: the long set.)
func TestDemoEvents(t *testing.T) {
	long(t)
	// The demo target is this binary, run as ceiling demo-target (TestMain).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	e := &env{ctx: context.Background(), stdout: &stdout, stderr: &stderr}
	err = demoEvents(e, exe, dir, 60)
	t.Log(stdout.String())
	if code, _ := codeOf(err); err != nil && code != ExitThreshold {
		t.Fatalf("demo events: %v\n%s", err, stderr.String())
	}
	r := readResult(t, filepath.Join(dir, "events.json"))
	if len(r.Events) != 1 || r.Events[0].Name != "deploy" || r.Events[0].Error != "" || r.Events[0].Window == nil {
		t.Fatalf("events %+v: want the deploy restart, measured", r.Events)
	}
	if d := r.Delivery; d == nil || d.Expected == 0 || d.Delivered+d.Lost+d.Undelivered != d.Expected {
		t.Errorf("delivery %+v: want every acked message accounted for (delivered, lost or undelivered)", d)
	}
	if !strings.Contains(stdout.String(), "What each event cost") {
		t.Errorf("no events table:\n%s", stdout.String())
	}
}
