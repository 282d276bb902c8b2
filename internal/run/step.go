package run

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// noExchange starts the warning of a step in which nothing completed.
const noExchange = "no exchange completed"

// newStep turns the executor's figures of a step into result.json's, with
// their warnings. scenarios and tagKeys name the breakdowns' indexes;
// share is this machine's share of the load's rate (1: all of it).
func newStep(res *load.Result, scenarios, tagKeys []string, share float64) (results.Step, error) {
	t := res.Total
	st := results.Step{Figures: results.Figures{
		Index:       res.Step.Index,
		Interrupted: res.Interrupted,
		Model:       "open",
		DurationS:   (res.WindowEnd - res.WindowStart).Seconds(),
		WarmupS:     res.Step.Warmup.Seconds(),
		Sent:        res.Sent, Iterations: res.Iterations, Completed: t.Completed(), OK: t.OK(), Limited: t.Limited(), Failed: t.Failed(),
		AchievedRate: res.Achieved(),
		Throughput:   res.Throughput(),
		Late:         t.Late + res.NotSent,
		NotSent:      res.NotSent,
		Retried:      t.Retried,
		Redirected:   t.Redirected,
		RetryAfters:  t.RetryAfters,
		RetryAfterS:  t.RetryAfterMax.Seconds(),
		MaxLagMS:     float64(t.MaxLag) / float64(time.Millisecond),
		MeanLagMS:    meanLagMS(t),
		Workers:      res.Workers,
		Generator: &results.Generator{
			CPUPct: res.GeneratorCPU, CPUs: runtime.GOMAXPROCS(0),
			GCPauseMS: float64(res.GCPause) / float64(time.Millisecond), Engine: engine(res.Loop),
			ConnLimit: res.ConnLimit,
		},
		BytesIn: t.BytesIn, BytesOut: t.BytesOut,
		LatencyMS:      metrics.Summarize(t.Latency),
		ServiceMS:      metrics.Summarize(t.Service),
		Warnings:       []string{},
		VerdictReasons: []string{},
	}}
	if wall := (res.WindowEnd - res.WindowStart + res.Step.Warmup).Seconds(); len(res.LaneCPU) > 0 && wall > 0 {
		st.Generator.Loops, st.Generator.LoopExchanges = len(res.LaneCPU), res.LaneExchanges
		for _, c := range res.LaneCPU {
			st.Generator.LoopCPUPct = append(st.Generator.LoopCPUPct, 100*c.Seconds()/wall)
		}
	}
	if res.PeakRSS > 0 {
		st.Generator.PeakRSSMB = float64(res.PeakRSS) / (1 << 20)
	}
	st.Generator.BytesPerUser = res.BytesPerUser
	if res.MemoryLimited {
		st.Generator.MemoryBudgetMB, st.Generator.HeapAtLimitMB = float64(res.MemoryBudget)/(1<<20), float64(res.HeapAtLimit)/(1<<20)
	}
	if res.HostKnown {
		other, steal := max(res.HostCPU-res.GeneratorCPU, 0), max(res.HostSteal, 0)
		st.Generator.HostOtherPct, st.Generator.HostStealPct = &other, &steal
	}
	var err error
	if st.Series, err = points(res.Series); err != nil {
		return st, err
	}
	st.Status4xx = t.Status4xx
	if res.Step.VUs > 0 {
		// The closed model has no schedule: a user starts when it is ready,
		// so nothing is late (a generator short of CPU shows in its CPU).
		st.Model, st.VUs = "closed", res.Step.VUs
		st.Late, st.MaxLagMS, st.MeanLagMS = 0, 0, 0
	} else {
		st.TargetRate = res.Step.TargetRate() * share
	}
	st.Errors = errorsOf(&t.Kinds)
	if st.Completed > 0 {
		st.ErrorRate = float64(st.Failed) / float64(st.Completed)
	}
	if st.Histogram, err = metrics.Encode(t.Latency); err != nil {
		return st, err
	}
	if st.ServiceHist, err = metrics.Encode(t.Service); err != nil {
		return st, err
	}
	if err := breakdowns(&st, t, scenarios, tagKeys); err != nil {
		return st, err
	}
	if st.Logins, err = logins(res); err != nil {
		return st, err
	}
	if res.Step.Trace {
		if st.Trace, err = trace(res); err != nil {
			return st, err
		}
	}
	st.Warnings = stepWarnings(res, &st)
	return st, nil
}

// logins is the step's login figures, or nil when the plan has no login.
func logins(res *load.Result) (*results.Logins, error) {
	l := &res.Total.Logins
	if l.Latency == nil {
		return nil, nil
	}
	out := &results.Logins{
		Count: l.Attempts(), OK: l.OK(), Failed: l.Failed(), ByClass: map[string]int64{},
		Retried: l.Retries, Skipped: l.Skipped, NotLoggedIn: int64(res.NotLoggedIn), LoggedInEarlier: int64(res.LoggedInEarlier),
		LatencyMS: metrics.Summarize(l.Latency),
	}
	for k := transport.Kind(0); k < transport.NumKinds; k++ {
		if k != transport.OK && l.Kinds[k] > 0 {
			out.ByClass[k.String()] = l.Kinds[k]
		}
	}
	var err error
	out.Histogram, err = metrics.Encode(l.Latency)
	return out, err
}

// trace is the step's exchanges one by one (Step.Trace) in result.json's
// form, on the series clock.
func trace(res *load.Result) (*results.Trace, error) {
	xs := make([]results.Exchange, len(res.Trace))
	for i, x := range res.Trace {
		xs[i] = results.Exchange{
			IntendedUS: int64(x.Intended / time.Microsecond), LatencyUS: int64(x.Latency / time.Microsecond),
			Class: x.Kind.String(), Weight: x.Weight,
		}
	}
	return results.NewTrace((res.WindowStart + res.Step.TraceFrom).Seconds(), xs)
}

// points copies the executor's seconds into result.json's series, with
// each second's histogram when the executor kept it.
func points(in []load.Point) ([]results.Point, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]results.Point, len(in))
	for i, p := range in {
		out[i] = results.Point{
			T: p.T, Completed: p.Completed, OK: p.OK, Failed: p.Failed, Limited: p.Limited,
			Rate: p.Rate, WindowS: p.WindowS, P50: p.P50, P99: p.P99, Max: p.Max,
		}
		if p.Latency != nil && p.Latency.TotalCount() > 0 {
			var err error
			if out[i].Histogram, err = metrics.Encode(p.Latency); err != nil {
				return nil, err
			}
			if e := errorsOf(&p.Kinds); len(e) > 0 {
				out[i].Errors = e // kept with the histograms: for events' windows and merges
			}
		}
	}
	return out, nil
}

// breakdowns fills the per-scenario and per-tag figures.
func breakdowns(st *results.Step, t *metrics.Tally, scenarios, tagKeys []string) error {
	st.Scenarios = []results.Breakdown{}
	for i, sub := range t.Scenarios {
		if i >= len(scenarios) {
			continue
		}
		b := breakdown(sub)
		b.Name = scenarioName(scenarios[i])
		var err error
		if b.Histogram, err = metrics.Encode(sub.Latency); err != nil {
			return err
		}
		st.Scenarios = append(st.Scenarios, b)
	}
	st.Tags = map[string]map[string]results.Breakdown{}
	for k, values := range t.Tags {
		if k >= len(tagKeys) {
			continue
		}
		m := map[string]results.Breakdown{}
		for v, sub := range values {
			if sub.Completed() > 0 {
				m[v] = breakdown(sub)
			}
		}
		st.Tags[tagKeys[k]] = m
	}
	return nil
}

// scenarioName is a scenario's name as written out: a websocket scenario's
// default name is its URL, whose secrets (a token in the query) are
// redacted.
func scenarioName(name string) string {
	if u, ok := strings.CutPrefix(name, "ws "); ok {
		return "ws " + secret.URL(u)
	}
	return name
}

func breakdown(s *metrics.Sub) results.Breakdown {
	b := results.Breakdown{
		Completed: s.Completed(), OK: s.OK(), Failed: s.Failed(), Limited: s.Limited(),
		LatencyMS: metrics.Summarize(s.Latency),
	}
	if b.Failed > 0 {
		b.Errors = errorsOf(&s.Kinds)
	}
	if b.Completed > 0 {
		b.AvgBodyBytes = float64(s.BodyBytes) / float64(b.Completed)
	}
	return b
}

// meanLagMS is the mean schedule lag of the counted exchanges, in ms.
func meanLagMS(t *metrics.Tally) float64 {
	n := t.Completed()
	if n == 0 {
		return 0
	}
	return float64(t.LagSum) / float64(n) / float64(time.Millisecond)
}

func stepWarnings(res *load.Result, st *results.Step) []string {
	w := []string{}
	t := res.Total
	if res.Interrupted {
		w = append(w, fmt.Sprintf("interrupted after %.1fs of %.0fs: a partial step, left out of the thresholds", st.DurationS, res.Step.Length.Seconds()))
	}
	if st.Completed == 0 {
		w = append(w, noExchange+" in this step: its figures are empty, not good")
	}
	if late := st.Late - st.NotSent; st.Sent > 0 && float64(late)/float64(st.Sent) > results.GeneratorLateShare {
		w = append(w, fmt.Sprintf("generator could not hold the rate: %d of %d arrivals (%.1f%%) started more than %v late (max lag %.0f ms); their latency includes the wait",
			late, st.Sent, 100*float64(late)/float64(st.Sent), metrics.LateAfter, st.MaxLagMS))
	}
	if st.NotSent > 0 {
		w = append(w, fmt.Sprintf("%d of the window's %d arrivals could not be started before it ended (no worker came free, or the generator fell that far behind) and were never sent: the step ended on time instead",
			st.NotSent, st.Sent+st.NotSent))
	}
	if st.Retried > 0 {
		w = append(w, fmt.Sprintf("%d requests were sent twice (retried): the server had closed their keep-alive connection, or (HTTP/2) refused them unprocessed (GOAWAY, REFUSED_STREAM); each counts once, by its second try's outcome, its latency from its first", st.Retried))
	}
	if n := t.Kinds[transport.Redirect]; n > 0 {
		w = append(w, fmt.Sprintf("%d responses were redirects (3xx), counted as failures: expect the status or set http.follow_redirects if they are intended", n))
	}
	if l := st.Logins; l != nil && l.Failed > 0 {
		w = append(w, loginWarning(l))
	}
	if t.Folded > 0 {
		w = append(w, fmt.Sprintf("%d iterations carried tag values past the limit of distinct values (tag_limit) and are counted under %q", t.Folded, metrics.Other))
	}
	if t.Clamped > 0 {
		w = append(w, fmt.Sprintf("%d response times exceeded the histogram's range and were recorded as %v", t.Clamped, time.Duration(metrics.HighestUS)*time.Microsecond))
	}
	if st.Sent > st.Completed && !res.Interrupted {
		w = append(w, fmt.Sprintf("%d exchanges were still in flight after the drain and are missing from the figures", st.Sent-st.Completed))
	}
	if busy := generatorBusy(res, runtime.GOMAXPROCS(0)); busy != "" {
		w = append(w, busy)
	}
	return w
}

// GeneratorBusyPct is the share of the CPU it could use past which
// ceiling says a closed step may have measured ceiling.
const GeneratorBusyPct = 90

// generatorBusy says when a closed step's users may have been held back
// by ceiling itself: it used nearly all the CPU it could (the one core of
// its event loop, or procs cores on goroutines). The open model says so
// by itself (arrivals late, or not sent); in the closed model a busy
// generator only sends fewer requests, which reads as the target's
// throughput.
func generatorBusy(res *load.Result, procs int) string {
	if res.Step.VUs == 0 || res.Interrupted {
		return ""
	}
	if res.Loop {
		busiest, lane := res.GeneratorCPU/float64(max(len(res.LaneCPU), 1)), 0
		if wall := (res.WindowEnd - res.WindowStart + res.Step.Warmup).Seconds(); wall > 0 {
			for i, c := range res.LaneCPU {
				if pct := 100 * c.Seconds() / wall; pct > 0 && (i == 0 || pct > busiest) {
					busiest, lane = pct, i
				}
			}
		}
		if busiest < GeneratorBusyPct {
			return ""
		}
		return fmt.Sprintf("ceiling's event loop %d of %d used %.0f%% of its core: the users' throughput may be ceiling's limit rather than the target's; run more loops (--loops, up to the cores) or spread them over agents (docs/distributed.md) to tell", lane+1, max(len(res.LaneCPU), 1), busiest)
	}
	if res.GeneratorCPU < GeneratorBusyPct*float64(procs) {
		return ""
	}
	return fmt.Sprintf("ceiling used %.0f%% of the CPU of the %d cores it could use: the users' throughput may be ceiling's limit rather than the target's; spread them over agents (docs/distributed.md) to tell", res.GeneratorCPU/float64(procs), procs)
}

// loginWarning says how the step's logins failed; the step itself is
// judged on its scenarios only.
func loginWarning(l *results.Logins) string {
	msg := fmt.Sprintf("%d of %d logins failed (%s), %d were retries", l.Failed, l.Count, classes(l.ByClass), l.Retried)
	if l.NotLoggedIn > 0 {
		msg += fmt.Sprintf("; %d users had not logged in by the step's end", l.NotLoggedIn)
	}
	if l.Skipped > 0 {
		msg += fmt.Sprintf("; %d arrivals of the window did not run for want of a login", l.Skipped)
	}
	return msg + ": the step's figures are its scenarios' only, the logins' are apart (logins)"
}

// classes lists failure classes by name: "timeout 3, http_5xx 1".
func classes(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// errorsOf names the failure classes that occurred, with their counts.
func errorsOf(c *metrics.Counts) map[string]int64 {
	m := map[string]int64{}
	for k := transport.Kind(0); k < transport.NumKinds; k++ {
		if k.Failed() && c[k] > 0 {
			m[k.String()] = c[k]
		}
	}
	return m
}

// Measure runs st on this machine and returns its figures as measured
// (not recorded, combined or judged) and the step's start on the run's
// clock (offset from its base): an agent's step, which its coordinator
// merges with the others' and judges.
func (s *Session) Measure(ctx context.Context, st load.Step) (results.Step, time.Duration, error) {
	if st.VUs > 0 {
		if st.VUs = s.o.Segment.Users(st.VUs); st.VUs == 0 {
			return results.Step{}, 0, badInput("step %d: segment %s of its users is none: fewer users than generators", st.Index+1, s.o.Segment)
		}
	}
	r := s.runner.Run(ctx, st)
	step, err := newStep(r, s.set.Names(), s.set.TagKeys(), s.o.Segment.Fraction())
	if err != nil {
		return step, 0, fmt.Errorf("step %d: %w", st.Index+1, err)
	}
	if step.Generator != nil {
		step.Generator.FDLimit = s.fdLimit
	}
	for i := range step.Scenarios {
		step.Scenarios[i].WebSocket = slices.Contains(s.set.WebSockets(), step.Scenarios[i].Name)
	}
	if step.Scenario = s.alone; s.alone != "" { // the others did not run
		step.Scenarios = slices.DeleteFunc(step.Scenarios, func(b results.Breakdown) bool { return b.Name != s.alone })
	}
	return step, r.WindowStart - r.Step.Warmup, nil
}

// NewUsers makes the next step start with new virtual users and
// connections, as a repeat does: an agent's, at its coordinator's asking.
func (s *Session) NewUsers() {
	s.runner.Fresh()
	if r, ok := s.ex.(transport.Resetter); ok {
		r.Reset()
	}
}

// engine names how a step's exchanges were made (results.Generator.Engine).
func engine(loop bool) string {
	if loop {
		return "loop"
	}
	return "goroutines"
}
