package report

import (
	"fmt"
	"io"
	"time"
)

// PlainEvery is how often a step's progress is written as a plain line
// when the output is not a terminal (a CI log, a file).
const PlainEvery = 5 * time.Second

// Progress is a step's state as the live line shows it.
type Progress struct {
	// Index is the step's position in the run, from 0.
	Index int
	// Rate is the open model's target rate per second (a ramp's mean);
	// VUs the closed model's number of users.
	Rate float64
	VUs  int
	// Warmup and Length are the step's planned warm-up and counted window.
	Warmup, Length time.Duration
	// Elapsed is the time since the step began, warm-up included; for a
	// step that is Done, the length of the window it counted.
	Elapsed time.Duration
	// Warming is true during the warm-up.
	Warming bool
	// Done marks the step's final figures.
	Done bool
	// Achieved is the achieved rate so far, per second; P50 and P99 the
	// response times so far, in milliseconds; ErrorRate the share of
	// completed exchanges that failed.
	Achieved, P50, P99, ErrorRate float64
	// Completed counts the exchanges completed so far: with none, there is
	// no latency to show (nor a rate, if none was achieved either).
	Completed int64
}

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

// Update shows a step's progress, or ends its line when p is Done.
func (l *Live) Update(p Progress) {
	if p.Done {
		l.done(p)
		return
	}
	in := p.Elapsed - p.Warmup
	phase := "warm-up"
	if !p.Warming {
		phase = fmt.Sprintf("%4.0fs/%.0fs", in.Seconds(), p.Length.Seconds())
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
	fmt.Fprintf(l.w, "%s%s  %s%s", prefix, l.line(p, phase), l.cpu(), end)
}

// done ends a step's line with its final figures.
func (l *Live) done(p Progress) {
	l.plain = 0
	prefix := ""
	if l.terminal {
		prefix = "\r\x1b[K"
	}
	took := fmt.Sprintf("%.0fs", p.Elapsed.Round(time.Second).Seconds())
	fmt.Fprintf(l.w, "%s%s%s\n", prefix, l.line(p, took), l.cpu())
}

// line is a step's progress: step, load, phase, achieved rate, p50/p99 so
// far and the error share.
func (l *Live) line(p Progress, phase string) string {
	n := fmt.Sprint(p.Index + 1)
	if l.steps > 0 {
		n += fmt.Sprintf("/%d", l.steps)
	}
	level := Rate(p.Rate)
	if p.VUs > 0 {
		level = fmt.Sprintf("%d users", p.VUs)
	}
	achieved, p50, p99, errs := Rate(p.Achieved), Millis(p.P50), Millis(p.P99), Percent(p.ErrorRate)
	if p.Completed == 0 {
		p50, p99, errs = "-", "-", "-"
		if p.Achieved == 0 {
			achieved = "-" // nothing sent yet, or nothing to send (an idle soak)
		}
	}
	return fmt.Sprintf("step %s  %s  %s  achieved %s  p50 %s  p99 %s  errors %s",
		n, level, phase, achieved, p50, p99, errs)
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
