package report

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// soakResult is a finished soak of 12 windows of 5 minutes: a target
// whose memory grows 14 MB an hour toward a 512 MB limit it reaches
// within the horizon, a flat p99, one error burst among the episodes.
func soakResult() *results.Result {
	ended := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	lo, hi := 13.1, 15.3
	at, early, late := 29.0*3600, 27.0*3600, 31.0*3600
	k := &results.Soak{Schema: results.SoakSchema, ForS: 3600, HeldS: 3600, BaseWindowS: 300, WindowS: 300, HorizonS: 3 * 3600,
		Trends: []results.Trend{
			{Figure: "p99_ms", Name: "p99", Unit: "ms", Windows: 12, Median: 12, Start: 12, End: 12.1, SlopePerH: 0.1, LowPerH: ptr(-0.4), HighPerH: ptr(0.5), R2: 0.01, Verdict: results.Stable, Why: "+0.1 ms/h ± 0.45, R² 0.01"},
			{Figure: "target.rss_mb", Name: "target RSS", Unit: "MB", Windows: 12, Median: 100, Start: 93, End: 107, SlopePerH: 14.2, LowPerH: &lo, HighPerH: &hi, R2: 0.98, Verdict: results.Drifting, Why: "+14.2 MB/h ± 1.1, R² 0.98",
				Projection: &results.Projection{Limit: results.Limit{Figure: "target.rss_mb", Value: 512, Above: true, Of: "the plan's memory limit (load.soak.memory_limit_mb)"}, AtS: at, InS: at - 3600, EarliestS: &early, LatestS: &late, WithinHorizon: false}},
		},
		Episodes:   []results.Episode{{Kind: results.EpisodeErrors, StartS: 1200, EndS: 1203, Failed: 75, Peak: 50, Text: "errors: 3 s from 0:20:00, 75 exchanges failed, up to 50% in a second (usually 0%)"}},
		Recurring:  []results.Recurrence{{Kind: results.EpisodeErrors, Count: 4, PeriodS: 900, JitterS: 2}},
		SLOWindows: 12,
	}
	for i := range 12 {
		rss := 93 + 14.2*float64(i+1)*300/3600
		k.Windows = append(k.Windows, results.SoakWindow{StartS: float64(i * 300), EndS: float64(i*300 + 300), Seconds: 300,
			Completed: 30000, OK: 30000, Throughput: 100, TargetRate: 100, LatencyMS: metrics.Latency{P50: 4, P99: 12},
			Target: &results.WindowTarget{RSSMB: &rss}})
	}
	return &results.Result{Schema: results.Schema, Command: "ceiling soak plan.yaml --for 1h", StartedAt: ended.Add(-time.Hour), EndedAt: &ended,
		Steps: []results.Step{{Figures: results.Figures{Index: 0, Model: "open", TargetRate: 100, DurationS: 3600, Completed: 360000, OK: 360000, Throughput: 100, LatencyMS: metrics.Latency{P50: 4, P99: 12}}}},
		Soak:  k, Warnings: []string{}}
}

// Every report shows a soak: its heading, each figure's line and verdict
// with its rate and projection, the episodes and their period; the HTML
// page plots the figures over the soak.
func TestSoakSection(t *testing.T) {
	r := soakResult()
	r.Judge(results.DefaultRules)
	var text, md, page bytes.Buffer
	if err := Text(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Soak: 100/s held 60 min of 60 min, in 12 windows of 5 min; drifts projected to 3.0 h from its start",
		"+14.2 MB/h ± 1.1", "DRIFTING", "reaches 512 MB (the plan's memory limit (load.soak.memory_limit_mb)) in about 28.0 h (27.0 h to 31.0 h from the start)",
		"errors: 3 s from 0:20:00", "error bursts recur every 15 min (± 2 s), 4 times", "the SLO held in all 12 windows",
		"soak: 1 DRIFTING over 60 min: target RSS +14.2 MB/h ± 1.1",
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.UnescapeString(page.String())} {
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q:\n%s", name, w, out)
			}
		}
	}
	if !strings.Contains(md.String(), "### "+SoakTitle) {
		t.Errorf("markdown lacks the section's heading")
	}
	for _, caption := range []string{"Latency over the soak", "The target&#39;s memory over the soak"} {
		if !strings.Contains(page.String(), caption) {
			t.Errorf("the HTML page has no plot %q", caption)
		}
	}
	// The limit, far above the memory and reached beyond twice the
	// horizon, is not drawn: it would flatten the plot.
	if strings.Contains(page.String(), "limit: the plan&#39;s memory limit") {
		t.Errorf("the HTML page draws a limit far out of the soak's reach")
	}
}

// A limit the line reaches within twice the horizon is drawn, with the
// line carried on to it.
func TestSoakPlotsNearLimit(t *testing.T) {
	r := soakResult()
	p := r.Soak.Trends[1].Projection
	p.AtS, p.InS, p.WithinHorizon = 2.5*3600, 1.5*3600, true
	cs := soakCharts(r)
	found := false
	for _, c := range cs {
		for _, s := range c.chart.series {
			if strings.HasPrefix(s.name, "limit: ") {
				found = true
				if last := s.points[len(s.points)-1]; last.x != 2.5*3600 || last.y != 512 {
					t.Errorf("limit drawn to %+v, want to the projection at 2.5 h", last)
				}
			}
		}
	}
	if !found {
		t.Errorf("no limit drawn for a projection within the horizon")
	}
}
