package sweep

import (
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// The best shape is the highest throughput that held its load; --need
// marks the smallest shape holding it; the lessons are computed from the
// rows.
func TestJudgeAndLessons(t *testing.T) {
	row := func(w int, cpus float64, mb int, rps float64, state string) Row {
		c := Config{Workers: w, CPUs: cpus, MemoryMB: mb}
		return Row{Name: c.Name(), ID: c.ID(), Workers: w, CPUs: cpus, MemoryMB: mb, Throughput: rps, State: state, Limits: "cgroup v2", CPUsEffective: cpus}
	}
	r := &Result{Need: 300, Configs: []Row{
		row(1, 1, 512, 200, results.Healthy),
		row(2, 1, 512, 114, results.Stressed), // workers without CPU
		row(1, 1, 1024, 202, results.Healthy), // memory changes little
		row(4, 4, 2048, 540, results.Healthy),
		row(8, 8, 4096, 900, results.Overloaded), // fastest, but overloaded
		{Name: "9w / 9c / 9Gi", State: FailedToStart},
	}}
	r.judge()
	var best, needed []string
	for _, c := range r.Configs {
		if c.Best {
			best = append(best, c.Name)
		}
		if c.Needed {
			needed = append(needed, c.Name)
		}
	}
	if len(best) != 1 || best[0] != "4w / 4c / 2Gi" || len(needed) != 1 || needed[0] != "4w / 4c / 2Gi" {
		t.Errorf("best %v, needed %v; want 4w / 4c / 2Gi for both (the 8c shape is overloaded)", best, needed)
	}
	want := []string{
		"2 workers on 1 CPU served 43 % less than 1 on the same CPU (512Mi): workers without CPU make it worse",
		"memory 512Mi → 1Gi (1w, 1c) changed throughput by +1 %",
		"scaling from 1 to 8 CPUs: 4.5× the throughput (56 % of linear, 1w / 1c / 1Gi → 8w / 8c / 4Gi)",
	}
	if strings.Join(r.Lessons, "\n") != strings.Join(want, "\n") {
		t.Errorf("lessons:\n%s\nwant:\n%s", strings.Join(r.Lessons, "\n"), strings.Join(want, "\n"))
	}
	var b strings.Builder
	if err := Markdown(&b, r); err != nil || !strings.Contains(b.String(), "| * 4w / 4c / 2Gi (need) |") || !strings.Contains(b.String(), "limits: {cpu: \"4\", memory: 2Gi}") {
		t.Errorf("Markdown lacks the starred row or the Helm values:\n%s", b.String())
	}
}

// Shapes that served all the load offered are not compared (their
// throughput is the load's), and the * goes to the smallest of them; rows
// ceiling could not drive, or cut short, are not compared either.
func TestJudgeUnlimitedAndUnmeasured(t *testing.T) {
	row := func(w int, cpus float64, mb int, rps float64, state string, unlimited bool) Row {
		c := Config{Workers: w, CPUs: cpus, MemoryMB: mb}
		return Row{Name: c.Name(), ID: c.ID(), Workers: w, CPUs: cpus, MemoryMB: mb, Throughput: rps, State: state, Unlimited: unlimited}
	}
	r := &Result{Configs: []Row{
		row(4, 4, 2048, 100.3, results.Healthy, true), // noise above the others
		row(1, 1, 512, 99.8, results.Healthy, true),
		row(1, 0.5, 512, 99.9, results.Stressed, true),
		row(2, 1, 512, 60, results.GeneratorLimited, false),
		row(1, 2, 512, 70, "INTERRUPTED", false),
	}}
	r.judge()
	if !r.Configs[1].Best || r.Configs[0].Best || r.Configs[2].Best {
		t.Errorf("best: %v %v %v; want the smallest HEALTHY shape that served all the load", r.Configs[0].Best, r.Configs[1].Best, r.Configs[2].Best)
	}
	lessons := strings.Join(r.Lessons, "\n")
	if strings.Contains(lessons, "scaling") || strings.Contains(lessons, "workers on") || !strings.Contains(lessons, "served all the rate offered") {
		t.Errorf("lessons compare rows that say nothing of their shapes:\n%s", lessons)
	}
}

// Templates read the shape's values, and a missing key is an error.
func TestValuesRender(t *testing.T) {
	v := Values{"workers": 2, "cpus": "0.5", "memory": "512Mi", "memory_mb": 512, "port": 8123}
	got, err := v.Render("server --workers {{.workers}} --port {{.port}} --mem {{.memory}}")
	if err != nil || got != "server --workers 2 --port 8123 --mem 512Mi" {
		t.Errorf("Render = %q, %v", got, err)
	}
	if _, err := v.Render("{{.threads}}"); err == nil {
		t.Errorf("a template reading an unknown value rendered")
	}
}

func TestParseNeed(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "1500/s": 1500, "150": 150} {
		if got, err := ParseNeed(in); err != nil || got != want {
			t.Errorf("ParseNeed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"fast", "1,2", "-5/s"} {
		if _, err := ParseNeed(bad); err == nil || !strings.Contains(err.Error(), "want one rate such as 1500/s") {
			t.Errorf("ParseNeed(%q) = %v, want an error saying what a rate is", bad, err)
		}
	}
}

// Without cgroups a 0.5-CPU shape is pinned to one whole CPU: throughput
// per CPU and scaling are taken on the CPU it could use, and the sweep's
// limits say they differed between shapes.
func TestEffectiveCPUs(t *testing.T) {
	r := &Result{Configs: []Row{
		{Name: "1w / 0.5c / 256Mi", Workers: 1, CPUs: 0.5, MemoryMB: 256, Throughput: 190, State: results.Healthy, CPUsEffective: 1, Limits: "no cgroup (x): CPU by affinity to whole CPUs (0.5 rounded up to 1); memory not enforced"},
		{Name: "1w / 2c / 256Mi", Workers: 1, CPUs: 2, MemoryMB: 256, Throughput: 380, State: results.Healthy, CPUsEffective: 2, Limits: "cgroup v1"},
	}}
	r.judge()
	lessons := strings.Join(r.Lessons, "\n")
	if !strings.Contains(lessons, "scaling from 1 to 2 CPUs: 2.0× the throughput (100 % of linear") {
		t.Errorf("lessons:\n%s\nwant scaling taken on the CPUs each shape could use (1 → 2)", lessons)
	}
	if !strings.HasPrefix(r.Limits, "per shape, not the same for all: no cgroup") {
		t.Errorf("limits %q, want them said per shape", r.Limits)
	}
}

// More workers on the same CPU that answer slower at the same load are a
// lesson even when both shapes served all of it (their throughputs are
// the load's): workers without CPU cost latency. Only a p95 clearly worse
// (or a worse verdict), under the same load, is one.
func TestLessonWorkersLatency(t *testing.T) {
	row := func(w int, p95 float64, state string, rate, rps float64) Row {
		c := Config{Workers: w, CPUs: 1, MemoryMB: 256}
		return Row{Name: c.Name(), ID: c.ID(), Workers: w, CPUs: 1, MemoryMB: 256, P95MS: p95, State: state,
			TargetRate: rate, Throughput: rps, Unlimited: rps >= 0.97*rate, CPUsEffective: 1}
	}
	cases := []struct {
		name string
		rows []Row
		want string // the workers lesson, "" for none
	}{
		{"slower, both served all", []Row{row(1, 51.5, results.Healthy, 20, 20), row(2, 100, results.Stressed, 20, 20)},
			"2 workers on 1 CPU answered slower than 1 on the same CPU (256Mi) at the same load (20/s): p95 51.5 ms → 100 ms (×1.9), HEALTHY → STRESSED: workers without CPU cost latency"},
		{"slower, the same verdict", []Row{row(1, 4, results.Healthy, 20, 20), row(4, 10, results.Healthy, 20, 20)},
			"4 workers on 1 CPU answered slower than 1 on the same CPU (256Mi) at the same load (20/s): p95 4.0 ms → 10.0 ms (×2.5): workers without CPU cost latency"},
		{"less and slower", []Row{row(1, 80, results.Healthy, 400, 300), row(2, 450, results.Overloaded, 400, 200)},
			"2 workers on 1 CPU served 33 % less than 1 on the same CPU (256Mi), and answered slower: p95 80.0 ms → 450 ms (×5.6), HEALTHY → OVERLOADED: workers without CPU make it worse"},
		{"noise: 1.0 → 1.2 ms", []Row{row(1, 1.0, results.Healthy, 20, 20), row(2, 1.2, results.Healthy, 20, 20)}, ""},
		{"under a millisecond more", []Row{row(1, 0.3, results.Healthy, 20, 20), row(2, 0.9, results.Healthy, 20, 20)}, ""},
		{"faster with more workers", []Row{row(1, 100, results.Stressed, 20, 20), row(2, 50, results.Healthy, 20, 20)}, ""},
		{"not the same load", []Row{row(1, 50, results.Healthy, 20, 20), row(2, 100, results.Stressed, 40, 40)}, ""},
		{"not judged", []Row{row(1, 50, results.Healthy, 20, 20), row(2, 100, results.GeneratorLimited, 20, 20)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Configs: c.rows}
			r.judge()
			var got []string
			for _, l := range r.Lessons {
				if strings.Contains(l, "workers on") {
					got = append(got, l)
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("lessons %q, want none about workers", got)
			case c.want != "" && (len(got) != 1 || got[0] != c.want):
				t.Errorf("lessons %q\nwant %q", got, c.want)
			}
		})
	}
}

// A sweep's outcome follows its rows: a shape whose target died (the OOM
// killer at its memory limit) or did not start fails a strict sweep (the
// default) and only that; an INVALID shape fails any sweep; a sweep no
// shape of which held fails; one in which every shape failed to start
// could not be carried out; --need that no shape holds fails.
func TestSweepOutcome(t *testing.T) {
	healthy := Row{Name: "2w / 1c / 512Mi", Throughput: 400, State: results.Healthy}
	oom := Row{Name: "1w / 1c / 128Mi", State: TargetDied, Died: "OOM-killed at 128Mi"}
	notStarted := Row{Name: "1w / 1c / 64Mi", State: FailedToStart, Error: "launch target: exited with status 1"}
	invalid := Row{Name: "4w / 2c / 1Gi", Throughput: 900, State: results.Invalid}
	over := Row{Name: "1w / 1c / 512Mi", Throughput: 100, State: results.Overloaded}
	for _, tt := range []struct {
		name   string
		rows   []Row
		strict bool
		need   float64
		status string
		says   string
	}{
		{"all held", []Row{healthy, over}, true, 0, results.StatusPassed, ""},
		{"a shape OOM-killed", []Row{healthy, oom}, true, 0, results.StatusFailed, "shape 1w / 1c / 128Mi: TARGET DIED (OOM-killed at 128Mi)"},
		{"a shape OOM-killed, not strict", []Row{healthy, oom}, false, 0, results.StatusPassed, ""},
		{"a shape did not start", []Row{healthy, notStarted}, true, 0, results.StatusFailed, "shape 1w / 1c / 64Mi failed to start"},
		{"an INVALID shape", []Row{healthy, invalid}, false, 0, results.StatusFailed, "shape 4w / 2c / 1Gi is INVALID"},
		{"none held", []Row{over}, true, 0, results.StatusFailed, "no shape held its load"},
		{"none started", []Row{notStarted}, false, 0, results.StatusCouldNotRun, "every shape failed to start"},
		{"need not met", []Row{healthy}, true, 1000, results.StatusFailed, "no shape holds the 1000/s"},
	} {
		r := &Result{Configs: tt.rows, strict: tt.strict, Need: tt.need}
		r.judge()
		if r.Outcome.Status != tt.status || r.Passed != (tt.status == results.StatusPassed) || !strings.Contains(r.Outcome.Summary(), tt.says) {
			t.Errorf("%s: outcome %+v, passed %v; want %s, saying %q", tt.name, r.Outcome, r.Passed, tt.status, tt.says)
		}
		var b strings.Builder
		if err := Text(&b, r); err != nil || !strings.Contains(b.String(), strings.ToUpper(strings.ReplaceAll(tt.status, "_", " "))) {
			t.Errorf("%s: the table does not end with the outcome (%v):\n%s", tt.name, err, b.String())
		}
	}
}
