package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// eventSample is sample() with events: a restart and a failing command
// in step 2 (which was HEALTHY, and so is STRESSED), and a pause that could not act in step
// 3; every step has a series, with the target's CPU.
func eventSample() *results.Result {
	r := sample()
	rec, exit := 1.5, 2
	r.Steps[1].Verdict, r.Steps[1].VerdictReason = results.Stressed, "events: restart-api, smoke" // as Judge says it
	r.Steps[1].Events = []string{"restart-api", "smoke"}
	r.Steps[2].Events = []string{"freeze"}
	r.Steps[2].VerdictReason = "event: freeze; " + r.Steps[2].VerdictReason
	r.Outcome.Reasons = append(r.Outcome.Reasons, results.Reason{Kind: results.ReasonEventFailed, Step: 2, Text: "required event smoke (run) failed: exit status 2"},
		results.Reason{Kind: results.ReasonNotRecovered, Step: 2, Text: "the target did not recover from event smoke (run) before the step ended"})
	r.Outcome.Status = results.StatusOf(r.Outcome.Reasons)
	r.Events = []results.Event{
		{Name: "restart-api", Action: "restart", Step: 1, AtS: 10, StartS: 15, DurationS: 2.4, RecoveryS: &rec,
			Window: &results.EventWindow{FromS: 15, ToS: 19, Completed: 1200, Failed: 310, Errors: map[string]int64{"refused": 300, "reset": 10},
				ErrorRate: 310.0 / 1200, P50MS: 2.1, P99MS: 2400, MaxMS: 2950}},
		{Name: "smoke", Action: "run", Step: 1, AtS: 12, StartS: 17, DurationS: 0.35, ExitCode: &exit, Required: true,
			Output: "checking...\nGET /health: connection refused\n", Recovery: results.NotRecovered,
			Window: &results.EventWindow{FromS: 17, ToS: 20, Completed: 800, Failed: 0, P50MS: 6, P99MS: 9, MaxMS: 12}},
		{Name: "freeze", Action: "pause", Step: 2, AtS: 1, StartS: 22, DurationS: 0, Error: "pause: the target has no pid (monitor.pid or monitor.command)",
			Recovery: results.NoBaseline},
	}
	r.Thresholds = append(r.Thresholds, results.Threshold{Expr: "recovery<5s", Value: 3000, OK: false})
	for i := range r.Steps {
		for s := range 5 {
			cpu := 40.0 + float64(i*20)
			r.Steps[i].Series = append(r.Steps[i].Series, results.Point{T: float64(i*7 + s + 1), Completed: 10, Failed: int64(i), P50: 5, P99: 9 + float64(i*100), TargetCPU: &cpu})
		}
	}
	return r
}

func TestEventsTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, eventSample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "events.txt", b.Bytes())
}

func TestEventsMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, eventSample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "events.md", b.Bytes())
}

// A failed action shows its error; a command its exit code, and when it
// failed its output's last line; the plan's required ones are marked.
func TestEventOutcome(t *testing.T) {
	zero, one := 0, 1
	tests := []struct {
		e    results.Event
		want string
	}{
		{results.Event{Action: "pause"}, "done"},
		{results.Event{Action: "run", ExitCode: &zero, Output: "fine\n"}, "exit 0"},
		{results.Event{Action: "run", ExitCode: &one, Output: "a\n\nlast words  \n\n"}, "exit 1: last words"},
		{results.Event{Action: "run", Error: "start: sh: not found", Required: true}, "failed: start: sh: not found (required)"},
		{results.Event{Action: "run", ExitCode: &one, Output: strings.Repeat("x", 100)}, "exit 1: " + strings.Repeat("x", 79) + "…"},
	}
	for _, tt := range tests {
		if got := outcome(tt.e); got != tt.want {
			t.Errorf("outcome(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

var eventRect = regexp.MustCompile(`<rect class="event" x="([0-9.]+)" y="[0-9]+" width="([0-9.]+)"`)

// The HTML page has the events' table after the steps', and marks each
// event on the plots over time: a line at its start labelled with its
// name, its span shaded until its end (none for an instant).
func TestEventsHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, eventSample()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	steps, events := strings.Index(page, "<th>verdict</th>"), strings.Index(page, "<h2>What each event cost</h2>")
	if steps < 0 || events < steps {
		t.Fatalf("the events' table is not after the steps' (at %d, %d)", steps, events)
	}
	for _, want := range []string{"<td>STRESSED (events: restart-api, smoke)</td>", "<td>restart-api</td><td>restart</td><td>2</td><td>10.0 s</td><td>2.40 s</td><td class=\"w\"><span>310</span> <span>(refused 300,</span> <span>reset 10)</span></td><td>25.8%</td><td class=\"w\"><span>2.40 s /</span> <span>2.95 s</span></td><td>1.50 s</td><td>done</td>",
		"<td>exit 2: GET /health: connection refused (required)</td>", "<td>no baseline before the event</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	r := eventSample()
	for _, prefix := range []string{"Response time over time", "Failed and limited", "Target CPU"} {
		svg := svgOf(t, r, prefix)
		for _, name := range []string{"restart-api", "smoke", "freeze"} {
			if !strings.Contains(svg, `fill="`+eventColor+`">`+name+"</text>") {
				t.Errorf("%s: no mark labelled %s", prefix, name)
			}
		}
		if !strings.Contains(svg, "<title>restart-api (restart) at 0:15 for 2.40 s; recovered 1.50 s after</title>") {
			t.Errorf("%s: the restart's mark has no tooltip that says what it was", prefix)
		}
		rects := eventRect.FindAllStringSubmatch(svg, -1)
		if len(rects) != 2 { // the pause lasted no time: a line, no span
			t.Errorf("%s: %d shaded spans, want 2 (restart, command)", prefix, len(rects))
		}
	}
}

// A recovery threshold's footer names the worst event; a step that failed
// it says so in the run's summary.
func TestRecoveryThresholdText(t *testing.T) {
	var b bytes.Buffer
	Text(&b, eventSample())
	for _, want := range []string{"FAIL recovery<5s (worst event: smoke, did not recover)", "recovery: 1 of 1 events did not recover"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, b.String())
		}
	}
}

// A rolling deploy that could not check its new copy's own readiness (an
// OS without /proc, a target in a container) says so in its outcome; one
// that checked it does not need to.
func TestEventOutcomeOverlapNotChecked(t *testing.T) {
	for _, c := range []struct {
		handover, want string
	}{
		{results.HandoverNotChecked + "only Linux shows which process listens on a port", "done, overlap not checked"},
		{"the new copy (pid 42) listened on port 8080 itself 12 ms after it was started; then the old one was stopped", "done"},
	} {
		if got := outcome(results.Event{Name: "deploy", Action: "rolling", Handover: c.handover}); got != c.want {
			t.Errorf("outcome(rolling, handover %q) = %q, want %q", c.handover, got, c.want)
		}
	}
}
