package run

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Second is one second of a step as it is counted, for live outputs
// (SecondOutput): what ended in it and the target's state at its end.
type Second struct {
	// Step is the step's index, from 0, and Label its name in tables
	// ("200/s", "50 VUs").
	Step  int
	Label string
	// At is the end of the second.
	At time.Time
	// Warming is true in the step's warm-up, whose exchanges are not
	// counted (Kinds and Scenarios are then empty).
	Warming bool
	// TargetRate is the open model's target rate (a ramp's mean); 0 in the
	// closed model.
	TargetRate float64
	// Rate is the responses finished in the window per second, this
	// second, over WindowS seconds of the window (a sliver at its edges).
	Rate, WindowS float64
	// Kinds counts this second's counted exchanges by how they ended.
	Kinds metrics.Counts
	// Late counts this second's exchanges that started late.
	Late int64
	// Scenarios names the scenarios, and Iterations counts each one's
	// iterations of this second by how they ended.
	Scenarios  []string
	Iterations []metrics.Counts
	// TagKeys names the tag keys, and Tags counts each key's iterations of
	// this second by value and how they ended (values past the plan's
	// tag_limit fold into "other").
	TagKeys []string
	Tags    []map[string]metrics.Counts
	// Latency holds this second's response times (µs, from the intended
	// start). It is valid only during the call.
	Latency *hdrhistogram.Histogram
	// TargetCPU (% of one core) and TargetRSS (MB) are the watched
	// target's latest reading, nil when it is not watched.
	TargetCPU, TargetRSS *float64
}

// stepLabel names a step as tables do.
func stepLabel(st load.Step) string {
	if st.VUs > 0 {
		return fmt.Sprintf("%d VUs", st.VUs)
	}
	return fmt.Sprintf("%g/s", st.TargetRate())
}

// onSecond returns the executor's per-second hook that passes each counted
// second on to a soak's collector and the outputs that take seconds, or
// nil when there is no soak and no output takes them.
func (s *Session) onSecond() func(load.Step, load.Point, *hdrhistogram.Histogram) {
	outs := s.outs.seconds()
	if len(outs) == 0 && s.soaking == nil {
		return nil
	}
	names, keys := s.set.Names(), s.set.TagKeys()
	return func(st load.Step, p load.Point, lat *hdrhistogram.Histogram) {
		if s.soaking != nil {
			s.soaking.second(p, lat)
		}
		if len(outs) == 0 {
			return
		}
		at := s.runner.Base().Add(time.Duration(p.T * float64(time.Second)))
		sec := Second{
			Step: st.Index, Label: stepLabel(st), At: at, Warming: p.Warming,
			TargetRate: st.TargetRate(), Rate: p.Rate, WindowS: p.WindowS, Kinds: p.Kinds, Late: p.Late,
			Scenarios: names, Iterations: p.Scenarios, TagKeys: keys, Tags: p.Tags, Latency: lat,
		}
		if s.watch != nil && s.watch.watcher != nil {
			if r := s.watch.watcher.Series(at.Add(-2*time.Second), at); len(r) > 0 {
				cpu, rss := r[len(r)-1].CPUPct, r[len(r)-1].RSSMB
				sec.TargetCPU, sec.TargetRSS = &cpu, &rss
			}
		}
		for _, o := range outs {
			o.Second(&sec)
		}
	}
}
