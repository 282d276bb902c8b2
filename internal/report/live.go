package report

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// PlainEvery is how often a step's progress is written as a plain line
// when the output is not a terminal (a CI log, a file).
const PlainEvery = 5 * time.Second

// Live writes progress while steps run: on a terminal one line per step,
// rewritten in place each second; elsewhere a plain line every PlainEvery
// of a step's counted window, and one when the step ends.
type Live struct {
	w        io.Writer
	terminal bool
	steps    int
	plain    time.Duration // the window time of the last plain line
	// TargetCPU, if set, returns the watched target's CPU (in percent of
	// one core) over the last seconds, and whether it is known.
	TargetCPU func() (float64, bool)
}

// NewLive returns a progress writer for w; terminal says whether w is a
// terminal that understands carriage returns; steps is how many steps the
// run has, or 0 when it is not known in advance (find).
func NewLive(w io.Writer, terminal bool, steps int) *Live {
	return &Live{w: w, terminal: terminal, steps: steps}
}

// Tick shows a step's progress. It runs on the step's collector goroutine.
func (l *Live) Tick(p load.Progress) {
	in := p.Elapsed - p.Step.Warmup
	phase := "warm-up"
	if !p.Warming {
		phase = fmt.Sprintf("%4.0fs/%.0fs", in.Seconds(), p.Step.Length.Seconds())
	}
	prefix, end := "\r\x1b[K", ""
	if !l.terminal {
		if p.Warming || in < l.plain+PlainEvery {
			if p.Warming {
				l.plain = 0
			}
			return
		}
		l.plain = in.Truncate(PlainEvery)
		prefix, end = "", "\n"
	}
	fmt.Fprintf(l.w, "%s%s  %s%s", prefix, l.line(p.Step, phase, p.Achieved, p.Total), l.cpu(), end)
}

// Done ends a step's line with its final figures.
func (l *Live) Done(res *load.Result) {
	l.plain = 0
	prefix := ""
	if l.terminal {
		prefix = "\r\x1b[K"
	}
	took := fmt.Sprintf("%.0fs", (res.WindowEnd - res.WindowStart).Round(time.Second).Seconds())
	fmt.Fprintf(l.w, "%s%s%s\n", prefix, l.line(res.Step, took, res.Achieved(), res.Total), l.cpu())
}

// line is a step's progress: step, load, phase, achieved rate, p50/p99 so
// far and the error share.
func (l *Live) line(st load.Step, phase string, achieved float64, t *metrics.Tally) string {
	errs := 0.0
	if c := t.Completed(); c > 0 {
		errs = float64(t.Failed()) / float64(c)
	}
	n := fmt.Sprint(st.Index + 1)
	if l.steps > 0 {
		n += fmt.Sprintf("/%d", l.steps)
	}
	return fmt.Sprintf("step %s  %s  %s  achieved %s  p50 %s  p99 %s  errors %s",
		n, level(st), phase, Rate(achieved),
		Millis(metrics.Quantile(t.Latency, 0.5)), Millis(metrics.Quantile(t.Latency, 0.99)), Percent(errs))
}

// cpu is the watched target's recent CPU, or nothing.
func (l *Live) cpu() string {
	if l.TargetCPU != nil {
		if v, ok := l.TargetCPU(); ok {
			return fmt.Sprintf("  target cpu %.0f%%", v)
		}
	}
	return ""
}

func level(s load.Step) string {
	if s.VUs > 0 {
		return fmt.Sprintf("%d users", s.VUs)
	}
	return Rate(s.TargetRate())
}
