package plan

import (
	"strings"
	"testing"
)

// Events are checked with the rest of the plan, each problem at its line.
func TestEventProblems(t *testing.T) {
	head := "target: http://127.0.0.1:9\nload: {rates: [10, 20], step: 10s}\nscenarios: [{request: {url: /}}]\n"
	for _, tc := range []struct {
		name, events string
		want         []string
	}{
		{"ok", "monitor: {command: server}\nevents: [{name: p, step: 2, at: 3s, action: pause, for: 1s}, {name: r, every_step: true, at: 1s, run: date}]\n", nil},
		{"both or none", "events: [{name: a, at: 1s}, {name: b, at: 1s, action: kill, run: date}]\n", []string{"events[0]: give an action", "events[1]: give an action"}},
		{"unknown action", "events: [{name: a, at: 1s, action: explode}]\n", []string{"events[0].action: want one of [pause kill restart rolling cpu]"}},
		{"no target to act on", "events: [{name: a, at: 1s, action: pause, for: 1s}, {name: b, at: 1s, action: restart}]\n", []string{
			"events[0].action: pause acts on the watched target", "events[1].action: restart starts the target again"}},
		{"at, step, name", "events: [{name: a, at: 10s, run: date, step: 3}, {name: a, run: date}]\n", []string{
			"events[0].at: want an offset into the step's 10s window", "events[0].step: want a step from 1 to 2", `events[1].name: "a" repeats events[0]'s name`}},
		{"pause without for", "monitor: {pid: 1}\nevents: [{name: a, at: 1s, action: pause}]\n", []string{"events[0].for: a pause needs a duration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(head+tc.events))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Parse = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted %s", tc.events)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("no %q in\n%v", w, err)
				}
			}
		})
	}
}
