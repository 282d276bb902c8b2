package report

import (
	"fmt"
	"io"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
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
	// shown is the drain time of the last drain line, and arrived the
	// arrivals since it.
	shown   time.Duration
	arrived int64
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
func (l *Live) Update(p results.Progress) {
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

// Window writes a soak's window as a line of its own (WindowLine): on a
// terminal, the progress line that was there is cleared first, and comes
// back with the next second.
func (l *Live) Window(line string) {
	prefix := ""
	if l.terminal {
		prefix = "\r\x1b[K"
	}
	fmt.Fprintf(l.w, "%s%s\n", prefix, line)
}

// done ends a step's line with its final figures.
func (l *Live) done(p results.Progress) {
	l.plain = 0
	prefix := ""
	if l.terminal {
		prefix = "\r\x1b[K"
	}
	took := fmt.Sprintf("%.0fs", p.Elapsed.Round(time.Second).Seconds())
	fmt.Fprintf(l.w, "%s%s%s\n", prefix, l.line(p, took), l.cpu())
}

// ProgressLine is a running step's progress as the live line says it: step
// (of steps, when known), load, phase, achieved rate, p50/p99 so far, the
// error share and the deliveries.
func ProgressLine(p results.Progress, steps int) string {
	phase := "warm-up"
	if !p.Warming {
		phase = fmt.Sprintf("%.0fs/%.0fs", (p.Elapsed - p.Warmup).Seconds(), p.Length.Seconds())
	}
	return (&Live{steps: steps}).line(p, phase)
}

// line is a step's progress: step, load, phase, achieved rate, p50/p99 so
// far and the error share.
func (l *Live) line(p results.Progress, phase string) string {
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
	line := fmt.Sprintf("step %s  %s  %s  achieved %s  p50 %s  p99 %s  errors %s",
		n, level, phase, achieved, p50, p99, errs)
	if d := p.Delivery; d != nil {
		line += fmt.Sprintf("  delivered %d/%d  backlog %d", d.Delivered, d.Expected, d.Backlog)
	}
	return line
}

// Drain shows the wait for late deliveries after the load: on a terminal
// one line rewritten in place, a countdown with the ids still missing and
// what arrived in the last second; elsewhere a plain line every
// PlainEvery; and a last line when it is Done.
func (l *Live) Drain(d results.Draining) {
	if d.Done {
		prefix := ""
		if l.terminal {
			prefix = "\r\x1b[K"
		}
		l.shown, l.arrived = 0, 0
		fmt.Fprintf(l.w, "%sdeliveries: %s\n", prefix, drainEnd(d))
		return
	}
	l.arrived += d.Arrived
	prefix, end := "\r\x1b[K", ""
	if !l.terminal {
		if d.Elapsed < l.shown+PlainEvery-PlainEvery/10 { // about every PlainEvery, as the calls come about once a second
			return
		}
		prefix, end = "", "\n"
	}
	left := max(d.Timeout-d.Elapsed, 0).Round(time.Second)
	fmt.Fprintf(l.w, "%swaiting for late deliveries  %s left of %s  %d missing  %d arrived in the last %s%s",
		prefix, left, d.Timeout, d.Missing, l.arrived, (d.Elapsed - l.shown).Round(time.Second), end)
	l.shown, l.arrived = d.Elapsed, 0
}

// drainEnd says how the wait for late deliveries ended.
func drainEnd(d results.Draining) string {
	took := d.Elapsed.Seconds()
	switch {
	case d.Missing == 0:
		return fmt.Sprintf("every accepted id arrived, the last %.1fs after the load stopped", took)
	case d.Complete:
		return fmt.Sprintf("%d missing after %.1fs, nothing arrived in its last seconds: lost", d.Missing, took)
	}
	return fmt.Sprintf("%d still missing when the wait ended after %.1fs, arrivals still coming", d.Missing, took)
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
