package agent

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// A step during which an agent was lost keeps its planned load: the
// merge of the agents that answered would add up to a smaller one. It
// lists the lost share, and its figures stay the others'.
func TestMergeKeepsThePlannedLoad(t *testing.T) {
	tests := []struct {
		name     string
		st       load.Step
		answered []results.Step // by agent; a zero Model: that agent was lost
		want     []results.LostPart
		rate     float64
		vus      int
		warning  string
	}{
		{
			name: "open model, 300/s over three agents, the second lost",
			st:   load.Step{Rate: 300, Length: time.Second},
			answered: []results.Step{
				{Model: "open", TargetRate: 100, Sent: 100, AchievedRate: 100},
				{},
				{Model: "open", TargetRate: 100, Sent: 100, AchievedRate: 100},
			},
			want:    []results.LostPart{{Agent: "b", Segment: "2/3", Share: 1.0 / 3, TargetRate: 100, AfterS: 1.5}},
			rate:    300,
			warning: "33.3% of the load (100/s of the step's 300/s) was on lost agents",
		},
		{
			name: "closed model, 5 users over three agents (2, 2, 1), the first and the last lost",
			st:   load.Step{VUs: 5, Length: time.Second},
			answered: []results.Step{
				{},
				{Model: "closed", VUs: 2, Completed: 40},
				{},
			},
			want: []results.LostPart{
				{Agent: "a", Segment: "1/3", Share: 0.4, VUs: 2, AfterS: 1.5},
				{Agent: "c", Segment: "3/3", Share: 0.2, VUs: 1, AfterS: 1.5},
			},
			vus:     5,
			warning: "60.0% of the load (3 of the step's 5 users) was on lost agents",
		},
		{
			name:     "every agent lost",
			st:       load.Step{Rate: 90, Length: time.Second},
			answered: []results.Step{{}, {}, {}},
			want: []results.LostPart{
				{Agent: "a", Segment: "1/3", Share: 1.0 / 3, TargetRate: 30, AfterS: 1.5},
				{Agent: "b", Segment: "2/3", Share: 1.0 / 3, TargetRate: 30, AfterS: 1.5},
				{Agent: "c", Segment: "3/3", Share: 1.0 / 3, TargetRate: 30, AfterS: 1.5},
			},
			rate:    90,
			warning: "100.0% of the load (90/s of the step's 90/s) was on lost agents",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Coordinator{base: time.Now()}
			n := len(tt.answered)
			parts, errs, lostAt := make([]*StepResult, n), make([]error, n), make([]time.Duration, n)
			for i, s := range tt.answered {
				c.agents = append(c.agents, &peer{addr: string(rune('a' + i))})
				if s.Model == "" {
					errs[i], lostAt[i] = io.ErrUnexpectedEOF, 1500*time.Millisecond
					continue
				}
				s.Errors, s.Warnings = map[string]int64{}, []string{}
				parts[i] = &StepResult{Step: s}
			}
			m, _, err := c.merge(tt.st, c.base, parts, errs, lostAt, run.Window{})
			if !errors.Is(err, failure.ErrAgentLost) {
				t.Fatalf("merge = %v, want an error matching failure.ErrAgentLost", err)
			}
			var sent, completed int64
			for _, s := range tt.answered {
				sent, completed = sent+s.Sent, completed+s.Completed
			}
			if m.Sent != sent || m.Completed != completed {
				t.Errorf("merged sent %d, completed %d; want the answering agents' %d, %d", m.Sent, m.Completed, sent, completed)
			}
			if m.TargetRate != tt.rate || m.VUs != tt.vus {
				t.Errorf("merged target_rate %v, vus %d; want the planned %v, %d", m.TargetRate, m.VUs, tt.rate, tt.vus)
			}
			if diff := cmp.Diff(tt.want, m.LostParts); diff != "" {
				t.Errorf("lost_parts (-want +got):\n%s", diff)
			}
			for _, lp := range tt.want {
				if !strings.Contains(m.Lost, "agent "+lp.Agent+" lost after 1.5 s: its share (segment "+lp.Segment) {
					t.Errorf("agent_lost = %q, want it to name agent %s, when and its segment", m.Lost, lp.Agent)
				}
			}
			if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, tt.warning) }) {
				t.Errorf("warnings %q, want one starting %q", m.Warnings, tt.warning)
			}
		})
	}
}
