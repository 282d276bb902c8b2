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
				{Figures: results.Figures{Model: "open", TargetRate: 100, Sent: 100, AchievedRate: 100}},
				{},
				{Figures: results.Figures{Model: "open", TargetRate: 100, Sent: 100, AchievedRate: 100}},
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
				{Figures: results.Figures{Model: "closed", VUs: 2, Completed: 40}},
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

// Each agent answers its step on its own run's clock (its start, seconds
// and trace from its session's start); the coordinator lines them up on
// the step's start on its own clock, so that the merged seconds and
// exchanges are the step's, whichever clock each agent counted on.
func TestMergeLinesUpTheAgentsSteps(t *testing.T) {
	answer := func(startS float64) *StepResult {
		tr, err := results.NewTrace(startS+0.5, []results.Exchange{
			{IntendedUS: int64(startS*1e6) + 600_000, LatencyUS: 10_000, Class: "ok", Weight: 1},
			{IntendedUS: int64(startS*1e6) + 1_000_000, LatencyUS: 20_000, Class: "ok", Weight: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		return &StepResult{Step: results.Step{Figures: results.Figures{Model: "open", StartS: startS, Errors: map[string]int64{}, Warnings: []string{},
			Series: []results.Point{{T: startS + 1}, {T: startS + 2}}, Trace: tr}}}
	}
	c := &Coordinator{base: time.Now(), agents: []*peer{{addr: "a"}, {addr: "b"}}}
	parts := []*StepResult{answer(2), answer(7)} // their sessions opened 5 s apart
	m, _, err := c.merge(load.Step{Rate: 10, Length: time.Second}, c.base.Add(10*time.Second), parts, make([]error, 2), make([]time.Duration, 2), run.Window{})
	if err != nil {
		t.Fatalf("merge = %v, want no error", err)
	}
	var ts []float64
	for _, p := range m.Series {
		ts = append(ts, p.T)
	}
	if want := []float64{11, 12}; !slices.Equal(ts, want) {
		t.Errorf("merged seconds at %v, want %v (the step's, from its start at 10 s)", ts, want)
	}
	if m.Trace == nil {
		t.Fatal("merged trace = nil, want both agents' exchanges")
	}
	xs, err := m.Trace.Decode()
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	for _, x := range xs {
		at = append(at, x.IntendedUS)
	}
	want := []int64{10_600_000, 10_600_000, 11_000_000, 11_000_000}
	if m.Trace.FromS != 10.5 || !slices.Equal(at, want) {
		t.Errorf("merged trace from %v s, exchanges intended at %v µs; want from 10.5 s, at %v", m.Trace.FromS, at, want)
	}
}
