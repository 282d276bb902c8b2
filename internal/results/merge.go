package results

import (
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Part is one generator's share of a step (an agent's, a --segment's),
// as the merged step lists it: so that a lagging generator shows.
type Part struct {
	// Agent names the generator: an agent's address, or a segment "2/3".
	Agent        string  `json:"agent"`
	TargetRate   float64 `json:"target_rate,omitempty"`
	VUs          int     `json:"vus,omitempty"`
	AchievedRate float64 `json:"achieved_rate"`
	Throughput   float64 `json:"throughput"`
	Sent         int64   `json:"sent"`
	Completed    int64   `json:"completed"`
	Late         int64   `json:"late"`
	NotSent      int64   `json:"not_sent"`
	// CPUPct is the generator's CPU, in percent of one core, of CPUs.
	CPUPct float64 `json:"cpu_pct"`
	CPUs   int     `json:"cpus"`
	// GeneratorLimited is the share's own judgement: one generator that
	// could not hold its share limits the whole step.
	GeneratorLimited bool   `json:"generator_limited"`
	Reason           string `json:"reason,omitempty"`
}

// MergeSteps merges the steps of one step that several generators ran,
// each its share of the load (agents, --segment), lined up on one clock
// (LineUp), into the step a single generator would have measured: their figures by MergeFigures, and the
// parts listed (Parts) under names (agents' addresses), each part's
// warnings prefixed with its name. Verdicts are not merged: the caller
// judges the merged step, and a part that was generator-limited makes it
// so (Parts).
func MergeSteps(parts []Step, names []string) (Step, error) {
	figures := make([]Figures, len(parts))
	for i := range parts {
		figures[i] = parts[i].Figures
	}
	f, err := MergeFigures(figures)
	if err != nil {
		return Step{}, err
	}
	m := Step{Figures: f, Agents: len(parts)}
	for i := range parts {
		m.Parts = append(m.Parts, partOf(&parts[i], nameOf(names, i)))
		for _, w := range parts[i].Warnings {
			m.Warnings = append(m.Warnings, nameOf(names, i)+": "+w)
		}
	}
	return m, nil
}

// LineUp moves a part of a step (an agent's, a segment's), measured on
// its own run's clock, onto another clock on which the step starts at
// startS (seconds, as Point.T): its seconds to the whole second from the
// step's start, so that the parts' k-th seconds meet in MergeSteps (a
// last, short second folds into its neighbour), and its trace's
// exchanges as they are, to the microsecond. StartS becomes startS. It
// copies the series and trace it moves: s may share them with a result
// the caller keeps.
func (s *Step) LineUp(startS float64) error {
	d := startS - s.StartS
	s.Series = slices.Clone(s.Series)
	for j := range s.Series {
		s.Series[j].T = startS + math.Round(s.Series[j].T-s.StartS)
	}
	if s.Trace != nil {
		tr := *s.Trace
		if err := tr.Shift(d); err != nil {
			return err
		}
		s.Trace = &tr
	}
	s.StartS = startS
	return nil
}

// nameOf is part i's name: names[i], or "#i+1".
func nameOf(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

// partOf is a part's line in the merged step.
func partOf(p *Step, name string) Part {
	out := Part{Agent: name, TargetRate: p.TargetRate, VUs: p.VUs, AchievedRate: p.AchievedRate, Throughput: p.Throughput,
		Sent: p.Sent, Completed: p.Completed, Late: p.Late, NotSent: p.NotSent, GeneratorLimited: p.generatorLimited()}
	if g := p.Generator; g != nil {
		out.CPUPct, out.CPUs = g.CPUPct, g.CPUs
	}
	if out.GeneratorLimited {
		out.Reason = p.generatorReason()
	}
	return out
}

// sameStatus folds part i's 4xx status into the merge's: the one status
// all parts with failures had, or -1 when they differ.
func sameStatus(acc, status int, failed int64, i int) int {
	switch {
	case acc < 0 || failed == 0 && status == 0:
		return acc
	case acc == 0:
		return status
	case status != acc:
		return -1
	}
	return acc
}

// mergeEncoded merges an encoded histogram into h ("" is empty).
func mergeEncoded(h *hdrhistogram.Histogram, enc string) error {
	if enc == "" {
		return nil
	}
	o, err := metrics.Decode(enc)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	h.Merge(o)
	return nil
}

// decodeOrEmpty decodes an encoded histogram; "" is an empty one.
func decodeOrEmpty(enc string) (*hdrhistogram.Histogram, error) {
	h := metrics.NewHistogram()
	return h, mergeEncoded(h, enc)
}
