package report

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Live writes progress while steps run: on a terminal one line per step,
// rewritten in place each second; elsewhere nothing until a step ends.
type Live struct {
	w        io.Writer
	terminal bool
	steps    int
	// TargetCPU, if set, returns the watched target's CPU (in percent of
	// one core) over the last seconds, and whether it is known.
	TargetCPU func() (float64, bool)
}

// NewLive returns a progress writer for w; terminal says whether w is a
// terminal that understands carriage returns.
func NewLive(w io.Writer, terminal bool, steps int) *Live {
	return &Live{w: w, terminal: terminal, steps: steps}
}

// Tick shows a step's progress. It runs on the step's collector goroutine.
func (l *Live) Tick(p load.Progress) {
	if !l.terminal {
		return
	}
	phase := "warm-up"
	if !p.Warming {
		phase = fmt.Sprintf("%4.0fs/%.0fs", (p.Elapsed - p.Step.Warmup).Seconds(), p.Step.Length.Seconds())
	}
	errs := 0.0
	if c := p.Total.Completed(); c > 0 {
		errs = float64(p.Total.Failed()) / float64(c)
	}
	cpu := ""
	if l.TargetCPU != nil {
		if v, ok := l.TargetCPU(); ok {
			cpu = fmt.Sprintf("  target cpu %.0f%%", v)
		}
	}
	fmt.Fprintf(l.w, "\r\x1b[Kstep %d/%d  %s  %s  achieved %s  p50 %s  p99 %s  errors %s%s",
		p.Step.Index+1, l.steps, level(p.Step), phase, Rate(p.Achieved),
		Millis(metrics.Quantile(p.Total.Latency, 0.5)), Millis(metrics.Quantile(p.Total.Latency, 0.99)),
		Percent(errs), cpu)
}

// Done ends a step's line with its final figures.
func (l *Live) Done(res *load.Result) {
	lat := metrics.Summarize(res.Total.Latency)
	errs := 0.0
	if c := res.Total.Completed(); c > 0 {
		errs = float64(res.Total.Failed()) / float64(c)
	}
	prefix := ""
	if l.terminal {
		prefix = "\r\x1b[K"
	}
	fmt.Fprintf(l.w, "%sstep %d/%d  %s  %.0fs  achieved %s  p50 %s  p99 %s  errors %s\n",
		prefix, res.Step.Index+1, l.steps, level(res.Step), (res.WindowEnd - res.WindowStart).Round(time.Second).Seconds(),
		Rate(res.Achieved()), Millis(lat.P50), Millis(lat.P99), Percent(errs))
}

func level(s load.Step) string {
	if s.VUs > 0 {
		return fmt.Sprintf("%d users", s.VUs)
	}
	return Rate(s.TargetRate())
}
