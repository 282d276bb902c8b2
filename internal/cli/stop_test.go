package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// What ceiling says at a first and a second signal fits the command: a
// run finishes its requests and writes its result, a server (the demo
// target, a mock, an agent) just stops; a SIGTERM, sent by whoever started
// ceiling (a run stopping the target it started), does not ask anyone to
// interrupt again. The demo target's log used to say it was "writing the
// result (interrupt again to abort)".
func TestStopNotes(t *testing.T) {
	tests := []struct {
		args          []string
		sig           os.Signal
		first, second string
		notFirst      []string
	}{
		{[]string{"run", "plan.yaml", "--rate", "10"}, os.Interrupt,
			"ceiling run: stopping: finishing in-flight requests and writing the result (interrupt again to abort)",
			"ceiling run: aborted; the result holds the steps written so far", nil},
		{[]string{"run", "plan.yaml"}, syscall.SIGTERM,
			"ceiling run: terminated, stopping: finishing in-flight requests and writing the result (a second signal aborts)",
			"ceiling run: aborted; the result holds the steps written so far", []string{"interrupt"}},
		{[]string{"find", "--url", "http://127.0.0.1:9/"}, os.Interrupt,
			"ceiling find: stopping: finishing in-flight requests and writing the result (interrupt again to abort)", "", nil},
		{[]string{"demo-target", "--addr", "127.0.0.1:8080"}, syscall.SIGTERM,
			"ceiling demo-target: terminated, stopping (a second signal aborts)", "ceiling demo-target: aborted", []string{"interrupt", "result"}},
		{[]string{"demo-target"}, os.Interrupt,
			"ceiling demo-target: stopping (interrupt again to abort)", "ceiling demo-target: aborted", []string{"result"}},
		{[]string{"mock", "--listen", "127.0.0.1:9911"}, syscall.SIGTERM, "ceiling mock: terminated, stopping (a second signal aborts)", "", []string{"result"}},
		{[]string{"agent", "--token-file", "t"}, syscall.SIGTERM, "ceiling agent: terminated, stopping (a second signal aborts)", "", []string{"result"}},
		{[]string{"no-such-command"}, os.Interrupt, "ceiling: stopping (interrupt again to abort)", "ceiling: aborted", nil},
	}
	for _, tt := range tests {
		first, second := StopNotes(tt.args, tt.sig)
		if first != tt.first {
			t.Errorf("StopNotes(%q, %v) first = %q, want %q", tt.args, tt.sig, first, tt.first)
		}
		if tt.second != "" && second != tt.second {
			t.Errorf("StopNotes(%q, %v) second = %q, want %q", tt.args, tt.sig, second, tt.second)
		}
		for _, w := range tt.notFirst {
			if strings.Contains(first, w) {
				t.Errorf("StopNotes(%q, %v) first = %q: says %q", tt.args, tt.sig, first, w)
			}
		}
	}
}
