package outputs

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// jsonLines writes one JSON object per line: one per second of every step
// ("type": "second") and one per finished step ("type": "step", the step
// as result.json has it), the vegeta way, for tools of the user's own.
type jsonLines struct {
	f     *os.File
	path  string
	runID string
	err   error
}

func newJSONLines(path, runID string) (*jsonLines, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &jsonLines{f: f, path: path, runID: runID}, nil
}

// SecondLine is one line of a second.
type SecondLine struct {
	Type       string    `json:"type"`
	RunID      string    `json:"run_id"`
	Step       int       `json:"step"`
	Label      string    `json:"label"`
	T          time.Time `json:"t"`
	Warming    bool      `json:"warming"`
	TargetRate float64   `json:"target_rate,omitempty"`
	Rate       float64   `json:"rate"`
	Completed  int64     `json:"completed"`
	OK         int64     `json:"ok"`
	Failed     int64     `json:"failed"`
	Limited    int64     `json:"limited"`
	Late       int64     `json:"late"`
	// Latency quantiles of the second, in milliseconds, from the intended
	// start; absent when nothing was counted in it.
	P50  *float64 `json:"p50_ms,omitempty"`
	P90  *float64 `json:"p90_ms,omitempty"`
	P99  *float64 `json:"p99_ms,omitempty"`
	P999 *float64 `json:"p999_ms,omitempty"`
	Max  *float64 `json:"max_ms,omitempty"`
	// The watched target at the second's end.
	TargetCPU *float64 `json:"target_cpu_pct,omitempty"`
	TargetRSS *float64 `json:"target_rss_mb,omitempty"`
}

// StepLine is the line of a finished step.
type StepLine struct {
	Type  string        `json:"type"`
	RunID string        `json:"run_id"`
	Step  *results.Step `json:"step"`
}

func (j *jsonLines) second(sec *run.Second, samples []sample) {
	l := SecondLine{
		Type: "second", RunID: j.runID, Step: sec.Step, Label: sec.Label, T: sec.At, Warming: sec.Warming,
		TargetRate: sec.TargetRate, Rate: sec.Rate, Completed: sec.Kinds.Completed(),
		OK: outcomes[0].of(&sec.Kinds), Failed: sec.Kinds.Failed(), Limited: outcomes[2].of(&sec.Kinds), Late: sec.Late,
		TargetCPU: sec.TargetCPU, TargetRSS: sec.TargetRSS,
	}
	for _, s := range samples {
		switch s.name {
		case LatencySeconds:
			ms := s.value * 1e3
			switch s.labels[0].value { // quantile sorts first
			case "0.5":
				l.P50 = &ms
			case "0.9":
				l.P90 = &ms
			case "0.99":
				l.P99 = &ms
			case "0.999":
				l.P999 = &ms
			case "1":
				l.Max = &ms
			}
		}
	}
	j.write(l)
}

func (j *jsonLines) step(runID string, st *results.Step, _ []sample) {
	j.write(StepLine{Type: "step", RunID: runID, Step: st})
}

func (j *jsonLines) write(v any) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = j.f.Write(append(b, '\n'))
	}
	j.err = err
}

func (j *jsonLines) close() []string {
	if err := j.f.Close(); err != nil && j.err == nil {
		j.err = err
	}
	if j.err != nil {
		return []string{fmt.Sprintf("json output %s: %v; the file is incomplete", j.path, j.err)}
	}
	return nil
}
