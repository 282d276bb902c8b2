package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// compare's statistics and verdicts are tested in package compare (with
// real runs there too), its HTML page in package report; here, what the
// command does with them: its exit codes, formats and flags.

// repeatOf is a step's repeats with these p50s (ms): p95 is 1.2 × p50,
// p99 1.5 × p50, throughput 100/s, no errors.
func repeatOf(p50 []float64) *results.Repeat {
	rep := &results.Repeat{N: len(p50), Values: map[string][]float64{}, CoVPct: map[string]float64{}}
	for _, x := range p50 {
		rep.Values["p50"] = append(rep.Values["p50"], x)
		rep.Values["p95"] = append(rep.Values["p95"], x*1.2)
		rep.Values["p99"] = append(rep.Values["p99"], x*1.5)
		rep.Values["throughput"] = append(rep.Values["throughput"], 100)
		rep.Values["error_rate"] = append(rep.Values["error_rate"], 0)
	}
	for m, v := range rep.Values {
		rep.CoVPct[m] = results.CoV(v)
	}
	return rep
}

// latencyOf is the latency of the median of these p50s (ms), as repeatOf.
func latencyOf(p50 []float64) metrics.Latency {
	m := results.Median(p50)
	return metrics.Latency{P50: m, P95: m * 1.2, P99: m * 1.5}
}

// writeRepeated writes a result whose one step ran 5 times with these p50s
// (ms), as repeatOf.
func writeRepeated(t *testing.T, path string, p50 ...float64) {
	t.Helper()
	r := &results.Result{Schema: results.Schema, Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 100, DurationS: 10,
		Throughput: 100, LatencyMS: latencyOf(p50), Repeat: repeatOf(p50)}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// writeControlled writes a result whose one step ran 5 times, an api
// scenario at these p50s (ms) beside a control "landing" at those, each
// as repeatOf.
func writeControlled(t *testing.T, path string, api, landing []float64) {
	t.Helper()
	n := int64(len(api))
	r := &results.Result{Schema: results.Schema, Control: "landing", Steps: []results.Step{{Figures: results.Figures{Model: "open", TargetRate: 200, DurationS: 10,
		Throughput: 200, Completed: 2000 * n, LatencyMS: latencyOf(api), Repeat: repeatOf(api), Scenarios: []results.Breakdown{
			{Name: "api", Completed: 1000 * n, OK: 1000 * n, LatencyMS: latencyOf(api), Repeat: repeatOf(api)},
			{Name: "landing", Completed: 1000 * n, OK: 1000 * n, LatencyMS: latencyOf(landing), Repeat: repeatOf(landing)},
		}}}}}
	if err := results.Write(path, r, results.Public); err != nil {
		t.Fatal(err)
	}
}

// compare exits 0, 1 when a significant change is worse with
// --fail-on-regression or a threshold is crossed, 4 when the control
// moved with --fail-on-regression (it could not tell: neither 0, as if
// nothing changed, nor 1), 2 on bad input; a threshold is a line the user
// drew, so crossing it exits 1 even when the control moved. The verdict
// is in every format.
func TestCompare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fast, fast2, slow := filepath.Join(dir, "fast.json"), filepath.Join(dir, "fast2.json"), filepath.Join(dir, "slow.json")
	writeRepeated(t, fast, 20.1, 19.8, 20.4, 20.0, 20.6)
	writeRepeated(t, fast2, 20.3, 19.9, 20.2, 20.5, 19.7)
	writeRepeated(t, slow, 26.2, 25.9, 26.5, 26.0, 26.8)
	base, slower, busy := filepath.Join(dir, "base.json"), filepath.Join(dir, "slower.json"), filepath.Join(dir, "busy.json")
	page := []float64{2.0, 2.05, 1.95, 2.02, 1.98}
	writeControlled(t, base, []float64{20.1, 19.8, 20.4, 20.0, 20.6}, page)
	writeControlled(t, slower, []float64{23.2, 22.9, 23.5, 23.0, 23.6}, page)
	writeControlled(t, busy, []float64{23.2, 22.9, 23.5, 23.0, 23.6}, []float64{4.0, 4.1, 3.9, 4.05, 3.95})
	tests := []struct {
		name   string
		args   []string
		code   ExitCode
		stdout string
		stderr string
	}{
		{"30 % slower", []string{fast, slow}, ExitOK, "verdict: worse: 3 significant changes", ""},
		{"30 % slower fails", []string{fast, slow, "--fail-on-regression"}, ExitThreshold, "verdict: worse", ""},
		{"same", []string{fast, fast2, "--fail-on-regression"}, ExitOK, "verdict: same: no significant change", ""},
		{"faster is no regression", []string{slow, fast, "--fail-on-regression"}, ExitOK, "verdict: better", ""},
		{"threshold crossed", []string{fast, slow, "--threshold", "p99:+10%"}, ExitThreshold, "threshold crossed: p99:+10%", ""},
		{"threshold held", []string{fast, fast2, "--threshold", "p99:+10%,throughput:-5%"}, ExitOK, "verdict: same", ""},
		{"min effect past the change", []string{fast, slow, "--min-effect", "40", "--fail-on-regression"}, ExitOK, "exceeds 40 %", ""},
		{"markdown", []string{fast, slow, "--format", "md"}, ExitOK, "### ceiling compare: **worse", ""},
		{"json", []string{fast, fast2, "--format", "json"}, ExitOK, `"verdict": "same"`, ""},
		{"html", []string{fast, slow, "--format", "html"}, ExitOK, `<p class="answer worse">verdict: worse: 3 significant changes`, ""},
		{"html fails", []string{fast, slow, "--format", "html", "--fail-on-regression"}, ExitThreshold, "</html>", ""},
		{"steady control, 15 % slower", []string{base, slower, "--fail-on-regression"}, ExitThreshold, "verdict: worse: 6 significant changes", ""},
		{"control moved", []string{base, busy, "--fail-on-regression"}, ExitCouldNotTell,
			"verdict: unknown: host busy: the control moved; regression signal suppressed: 1 (200/s) p50 +15.4 % p=0.0079", ""},
		{"control moved, not gated", []string{base, busy}, ExitOK, "verdict: unknown: host busy", ""},
		{"control moved, threshold crossed", []string{base, busy, "--fail-on-regression", "--threshold", "p50:+10%"}, ExitThreshold, "threshold crossed: p50:+10%", ""},
		{"control moved, markdown", []string{base, busy, "--fail-on-regression", "--format", "md"}, ExitCouldNotTell, "**Could not tell:** the control moved", ""},
		{"control moved, html", []string{base, busy, "--format", "html"}, ExitOK, `<tr class="suppressed">`, ""},
		// --min-abs is the judged scenarios' floor: the control is judged
		// on its own scale (half its figure), so a wide --min-abs does not
		// silence a control that doubled.
		{"a floor above the control's move", []string{base, busy, "--fail-on-regression", "--min-abs", "5ms"}, ExitCouldNotTell, "verdict: unknown: host busy: the control moved", ""},
		{"bad min-abs", []string{base, busy, "--min-abs", "-1ms"}, ExitBadInput, "", "--min-abs -1ms"},
		{"bad threshold", []string{fast, slow, "--threshold", "p99:-10%"}, ExitBadInput, "", `ceiling: --threshold "p99:-10%": p99 gets worse going up: want p99:+10%`},
		{"bad format", []string{fast, slow, "--format", "xml"}, ExitBadInput, "", `--format "xml": want text, md, json or html`},
		{"bad min effect", []string{fast, slow, "--min-effect", "-1"}, ExitBadInput, "", "--min-effect -1"},
		{"missing file", []string{fast, filepath.Join(dir, "nope.json")}, ExitBadInput, "", "read result"},
		{"one file", []string{fast}, ExitBadInput, "", "accepts 2 arg(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ceiling(t, context.Background(), append([]string{"compare"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("compare %v: exit %d, want %d; stdout (want %q):\n%s\nstderr (want %q):\n%s", tt.args, code, tt.code, tt.stdout, stdout, tt.stderr, stderr)
			}
			if code == ExitOK && stderr != "" {
				t.Errorf("compare %v: exit 0 with stderr %q, want nothing there", tt.args, stderr)
			}
		})
	}
}
