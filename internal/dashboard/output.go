package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Output feeds a Server from a run: the result so far when the session
// opens, after every step and after a soak's every window, the running
// step's seconds (its row in the table and its line in the plots over
// time, the last RunningSeconds of it) and progress each second, and the
// final result with its report.
//
// The session's calls only take the news and wake a renderer goroutine:
// a page is rendered (the report's tables and plots) off the step's
// collector goroutine, at most once per piece of news.
type Output struct {
	srv *Server
	f   Feed

	mu      sync.Mutex
	res     *results.Result         // the result so far (the session's: read under mu only)
	running *results.Step           // the step under way, nil between steps
	hist    *hdrhistogram.Histogram // its counted seconds' response times, merged
	now     string                  // its live line
	wake    chan struct{}
	done    chan struct{}
}

var (
	_ run.Output         = (*Output)(nil)
	_ run.SecondOutput   = (*Output)(nil)
	_ run.ProgressOutput = (*Output)(nil)
	_ run.WindowOutput   = (*Output)(nil)
)

// RunningSeconds is how many of the running step's seconds the page
// plots, the latest: a soak's step lasts hours, and its windows are
// plotted from the result (Window).
const RunningSeconds = 600

// Feed says what an Output shows besides its run.
type Feed struct {
	// Steps is how many steps the run has, for the live line; 0 when it is
	// not known (a search).
	Steps int
	// Many makes the Output the page of several runs one after another (a
	// sweep's shapes): it takes each session's Start to Stop, and its owner
	// ends the page (Server.End, Close) when the last has stopped. Without
	// it, the run's Stop ends the page and stops serving it.
	Many bool
	// Title, when set, is the page's title instead of the run's.
	Title string
	// Above, when set, returns HTML shown above the run (the sweep so far
	// and the shape under way); it is called from the renderer's
	// goroutine.
	Above func() string
}

// NewOutput returns the output that keeps srv's page current.
func NewOutput(srv *Server, f Feed) *Output {
	o := &Output{srv: srv, f: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.render()
	return o
}

// Start shows the run as it opened: no step yet.
func (o *Output) Start(res *results.Result) error {
	o.mu.Lock()
	o.res, o.running, o.now = copyOf(res), nil, ""
	o.mu.Unlock()
	o.poke()
	return nil
}

// Second adds a counted second to the running step's line in the plots.
func (o *Output) Second(sec *run.Second) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.res == nil {
		return
	}
	o.begin(sec.Step)
	if sec.TargetRate > 0 {
		o.running.TargetRate = sec.TargetRate
	}
	if !sec.Warming && sec.Latency != nil && sec.Latency.TotalCount() > 0 {
		// Merged, never averaged: the row's percentiles are the step's.
		o.hist.Merge(sec.Latency)
		o.running.LatencyMS = metrics.Summarize(o.hist)
	}
	p := results.Point{
		T:         sec.At.Sub(o.res.StartedAt).Seconds(),
		Completed: sec.Kinds.Completed(), OK: sec.Kinds[transport.OK], Failed: sec.Kinds.Failed(), Limited: sec.Kinds[transport.Limited],
		Rate: sec.Rate, WindowS: sec.WindowS, TargetCPU: sec.TargetCPU, TargetRSS: sec.TargetRSS,
	}
	if sec.Latency != nil && sec.Latency.TotalCount() > 0 {
		p.P50, p.P99, p.Max = metrics.Quantile(sec.Latency, 0.5), metrics.Quantile(sec.Latency, 0.99), metrics.Quantile(sec.Latency, 1)
	}
	if n := len(o.running.Series); n >= 2*RunningSeconds {
		kept := copy(o.running.Series, o.running.Series[n-RunningSeconds+1:])
		o.running.Series = o.running.Series[:kept]
	}
	o.running.Series = append(o.running.Series, p)
}

// Window takes the result after a soak's window: its windows, trends and
// episodes so far, plotted under the running step.
func (o *Output) Window(res *results.Result) error {
	o.mu.Lock()
	o.res = copyOf(res)
	o.mu.Unlock()
	o.poke()
	return nil
}

// Progress takes the running step's figures so far, for its row and line.
func (o *Output) Progress(p *results.Progress) {
	o.mu.Lock()
	o.begin(p.Index)
	s := o.running
	s.TargetRate, s.VUs, s.Model = p.Rate, p.VUs, "open"
	if p.VUs > 0 {
		s.Model = "closed"
	}
	s.Completed, s.AchievedRate, s.ErrorRate = p.Completed, p.Achieved, p.ErrorRate
	o.now = "Now: " + report.ProgressLine(*p, o.f.Steps)
	o.mu.Unlock()
	o.poke()
}

// begin makes step index the running one, anew when it was another; the
// caller holds mu.
func (o *Output) begin(index int) {
	if o.running != nil && o.running.Index == index {
		return
	}
	o.running = &results.Step{Figures: results.Figures{Index: index, Verdict: "RUNNING", VerdictReason: "under way", Model: "open"}}
	if o.hist == nil {
		o.hist = metrics.NewHistogram()
	}
	o.hist.Reset()
}

// Drain says the load has stopped and late deliveries are awaited.
func (o *Output) Drain(d *results.Draining) {
	o.mu.Lock()
	o.running = nil
	o.now = "Now: waiting for late deliveries"
	if d.Done {
		o.now = ""
	}
	o.mu.Unlock()
	o.poke()
}

// Step takes a finished step: the result so far replaces the running row.
func (o *Output) Step(f *run.Finished) error {
	o.mu.Lock()
	o.res, o.running, o.now = copyOf(f.Result), nil, ""
	o.mu.Unlock()
	o.poke()
	return nil
}

// Stop shows the final result and its report, ends the page and stops
// serving it (Close: an open page first takes the end and the report). A
// run that stopped on an error shows what it measured, said unfinished.
// With Feed.Many it only shows the run's final result, until the next.
func (o *Output) Stop(res *results.Result) error {
	if o.f.Many {
		o.mu.Lock()
		if res != nil {
			o.res = copyOf(res)
		}
		o.running, o.now = nil, ""
		o.mu.Unlock()
		o.poke()
		return nil
	}
	close(o.done)
	if res == nil {
		o.srv.End("ceiling", "<p>The run could not start.</p>", nil)
		return o.srv.Close()
	}
	var page bytes.Buffer
	if err := report.HTML(&page, res); err != nil {
		return errors.Join(err, o.srv.Close())
	}
	o.srv.End(report.Title(res), report.FinalBody(res), page.Bytes())
	return o.srv.Close()
}

// copyOf is a copy of res that shares nothing with it: the session goes
// on changing its result (the next step, the final judging) while the
// renderer reads the copy. It is taken in the session's call, where res
// is the session's to read; result.json's form holds every field.
func copyOf(res *results.Result) *results.Result {
	if res == nil {
		return nil
	}
	data, err := json.Marshal(res)
	var c results.Result
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		// Not expected of a result the session could write; the page
		// then shows the copy without its steps rather than racing.
		c = results.Result{Name: res.Name, StartedAt: res.StartedAt, Command: res.Command}
	}
	return &c
}

// poke wakes the renderer, which renders once however many pokes came.
func (o *Output) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// render publishes a page for each wake until Stop.
func (o *Output) render() {
	for {
		select {
		case <-o.done:
			return
		case <-o.srv.closing:
			return
		case <-o.wake:
		}
		o.mu.Lock()
		if o.res == nil {
			o.mu.Unlock()
			continue
		}
		r := *o.res // the Output's own copy: only its Steps slice is replaced below
		r.Steps = slices.Clone(o.res.Steps)
		var running *results.Step
		if o.running != nil {
			s := *o.running
			s.Series = slices.Clone(o.running.Series)
			running = &s
		}
		now := o.now
		o.mu.Unlock()
		title, body := report.Title(&r), report.LiveBody(&r, running, now)
		if o.f.Title != "" {
			title = o.f.Title
		}
		if o.f.Above != nil {
			body = o.f.Above() + body
		}
		o.srv.Publish(title, body)
	}
}
