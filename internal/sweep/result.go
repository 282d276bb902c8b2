package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// Schema names sweep.json's format.
const Schema = "ceiling.sweep/v1"

// FailedToStart is the state of a shape whose target never became ready.
const FailedToStart = "FAILED TO START"

// TargetDied is the state of a shape whose target died during its run (an
// exit, a crash, the OOM killer): Row.Died says how.
const TargetDied = "TARGET DIED"

// Result is sweep.json: every shape's row, the best, and what the shapes
// tell.
type Result struct {
	Schema    string    `json:"schema"`
	Command   string    `json:"command"`
	StartedAt time.Time `json:"started_at"`
	// UsersPerRPS is the requests a second one active user makes, for
	// est_users; Need the rate --need asked for (0: none).
	UsersPerRPS float64 `json:"users_per_rps"`
	Need        float64 `json:"need_rps,omitempty"`
	// Limits says how the shapes' CPU and memory were enforced: "cgroup
	// v1", "cgroup v2", or "not enforced: why".
	Limits string `json:"limits"`
	// Mode is "find" when each shape's edge was searched for; empty for
	// the plan's stairs.
	Mode string `json:"mode,omitempty"`
	// Fingerprint is a hash of what the figures depend on (Spec's).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Resumed counts the shapes kept from an earlier sweep (--resume).
	Resumed     int      `json:"resumed,omitempty"`
	Configs     []Row    `json:"configs"`
	Lessons     []string `json:"lessons"`
	Interrupted bool     `json:"interrupted,omitempty"`
	// Unfinished is true in every write before the sweep's last (one after
	// each shape): a file that still says so was left by a ceiling that
	// was killed mid-sweep. No row of such a file is best or needed: those
	// are judged over every shape, once the sweep is over.
	Unfinished bool `json:"unfinished,omitempty"`
	// Passed is Outcome's status read as one bit: the sweep's exit code
	// is 0 only when it is true.
	Passed bool `json:"passed"`
	// Outcome is the sweep's answer, with every reason it did not pass
	// (decide).
	Outcome results.Outcome `json:"outcome"`

	strict bool // the plan's strictness: a shape that died or did not start fails the sweep
}

// Row is one shape's outcome: its last step's figures.
type Row struct {
	Name       string  `json:"name"`
	ID         string  `json:"id"`
	Workers    int     `json:"workers"`
	CPUs       float64 `json:"cpus"`
	MemoryMB   int     `json:"memory_mb"`
	Throughput float64 `json:"throughput"`
	// PerCPU is throughput per CPU of quota: the shape's efficiency.
	PerCPU    float64 `json:"throughput_per_cpu,omitempty"`
	P50MS     float64 `json:"p50_ms"`
	P95MS     float64 `json:"p95_ms"`
	P99MS     float64 `json:"p99_ms"`
	ErrorRate float64 `json:"error_rate"`
	// State is the step's verdict, FAILED TO START, or TARGET DIED.
	State string `json:"state"`
	// Died says how the target died (TARGET DIED): "OOM-killed at 4 MiB"
	// when its cgroup counted an OOM kill, else its exit ("killed by
	// SIGKILL", "exited with status 1").
	Died      string `json:"died,omitempty"`
	SLOPassed *bool  `json:"slo_passed,omitempty"`
	// EstUsers is throughput ÷ users_per_rps: the active users the shape
	// serves at that rate.
	EstUsers float64 `json:"est_users"`
	// Best marks the shape with the highest throughput that is neither
	// OVERLOADED nor failed; Needed the smallest shape holding --need.
	Best   bool `json:"best"`
	Needed bool `json:"needed,omitempty"`
	// CPUPct and RSSMB are the target's CPU (percent of one core) and
	// peak memory in the row's step: null when nothing watched them (the
	// command launcher without a monitor section).
	CPUPct *float64 `json:"cpu_pct"`
	RSSMB  *float64 `json:"rss_mb"`
	// TargetRate is the rate the row's step offered (open model); a shape
	// that served all of it showed no limit.
	TargetRate float64 `json:"target_rate,omitempty"`
	// Unlimited is true when the load found no limit of the shape: it
	// served all the rate offered (stairs, open model), or passed every
	// level up to find's --max. Its throughput is the load's, not the
	// shape's: the lessons compare its latency at the same load, not it.
	Unlimited bool `json:"unlimited,omitempty"`
	// Edge is the shape's edge (find mode): the highest rate per second
	// (or users) within the SLO; the row's figures are its step's.
	Edge float64 `json:"edge,omitempty"`
	// Limits says how the shape's CPU and memory were enforced (see
	// Enforced); CPUsEffective is the CPU time its target could use, on
	// which throughput per CPU and scaling are taken (0: not limited).
	Limits        string  `json:"limits,omitempty"`
	CPUsEffective float64 `json:"cpus_effective,omitempty"`
	// Result is the path of the shape's own result.json; Error says why
	// its target did not start, or how and when it died.
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// Warnings say what went wrong around the shape's run: a teardown
	// that failed (its target may still be running), a group not removed.
	Warnings []string `json:"warnings,omitempty"`
	// LogTail is the last lines of a shape's log when it failed to start
	// or its target died.
	LogTail string `json:"log_tail,omitempty"`
}

// holds reports whether the row served its load: measured, not
// OVERLOADED, INVALID or generator-limited, its SLO (if any) held.
func (r *Row) holds() bool {
	switch r.State {
	case results.Healthy, results.Stressed:
		return r.SLOPassed == nil || *r.SLOPassed
	}
	return false
}

// judge marks the best shape and the one --need asks for, and computes
// the lessons. The best is the highest throughput that holds; but when
// some shapes served all the load offered, their throughputs are the
// load's, and the best is the smallest of them (HEALTHY before STRESSED).
// An unfinished sweep marks neither: a shape still to run may beat them.
func (r *Result) judge() {
	for i := range r.Configs {
		r.Configs[i].Best, r.Configs[i].Needed = false, false
	}
	r.Lessons = lessons(r.Configs)
	r.Limits = limitsOf(r.Configs)
	defer r.decide()
	if r.Unfinished {
		return
	}
	best := -1
	for i := range r.Configs {
		c := &r.Configs[i]
		if !c.holds() {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := &r.Configs[best]
		switch {
		case c.Unlimited != b.Unlimited:
			if c.Unlimited {
				best = i
			}
		case c.Unlimited:
			if cmp.Or(cmp.Compare(healthRank(c.State), healthRank(b.State)), c.compareSize(b)) < 0 {
				best = i
			}
		case c.Throughput > b.Throughput:
			best = i
		}
	}
	if best >= 0 {
		r.Configs[best].Best = true
	}
	if r.Need > 0 {
		need := -1
		for i := range r.Configs {
			c := &r.Configs[i]
			if !c.holds() || c.Throughput < r.Need {
				continue
			}
			if need < 0 || c.compareSize(&r.Configs[need]) < 0 {
				need = i
			}
		}
		if need >= 0 {
			r.Configs[need].Needed = true
		}
	}
}

// limitsOf says how the shapes' limits were enforced: the one way, or
// "per shape" when they differ (each row says).
func limitsOf(rows []Row) string {
	var hows []string
	for _, c := range rows {
		if c.Limits != "" && !slices.Contains(hows, c.Limits) {
			hows = append(hows, c.Limits)
		}
	}
	switch len(hows) {
	case 0:
		return "-"
	case 1:
		return hows[0]
	}
	return "per shape, not the same for all: " + strings.Join(hows, "; ")
}

// compareSize orders shapes smallest first: fewer CPUs, then less
// memory, then fewer workers.
func (r *Row) compareSize(o *Row) int {
	return cmp.Or(cmp.Compare(r.CPUs, o.CPUs), cmp.Compare(r.MemoryMB, o.MemoryMB), cmp.Compare(r.Workers, o.Workers))
}

// healthRank orders verdicts: HEALTHY, then STRESSED, then the rest.
func healthRank(state string) int {
	switch state {
	case results.Healthy:
		return 0
	case results.Stressed:
		return 1
	}
	return 2
}

// comparable reports whether a row's throughput says what its shape can
// serve: measured by a verdict (not failed, interrupted, invalid or
// limited by ceiling itself), and not a load the shape served in full.
func (r *Row) comparable() bool {
	switch r.State {
	case results.Healthy, results.Stressed, results.Overloaded:
		return !r.Unlimited && r.Throughput > 0
	}
	return false
}

// verdicted reports whether a row's step was judged on the target's
// figures: HEALTHY, STRESSED or OVERLOADED.
func (r *Row) verdicted() bool {
	switch r.State {
	case results.Healthy, results.Stressed, results.Overloaded:
		return true
	}
	return false
}

// Latency lessons: a p95 is taken as worse when it is both SlowerShare
// times the other's and SlowerMinMS more (sub-millisecond differences on
// loopback are noise), or when the verdict is worse.
const (
	SlowerShare = 1.25
	SlowerMinMS = 1.0
)

// slowerAtSameLoad reports whether b answered slower than a under the
// same load: the same rate offered (open model; find's rows only at the
// same edge), or the plan's users (closed model).
func slowerAtSameLoad(a, b *Row) bool {
	if a.TargetRate != b.TargetRate || a.Edge != b.Edge || a.P95MS <= 0 {
		return false
	}
	return b.P95MS >= SlowerShare*a.P95MS && b.P95MS-a.P95MS >= SlowerMinMS || healthRank(b.State) > healthRank(a.State)
}

// latencyChange says how the p95 went from a to b, and the verdict when
// it changed: "p95 51.5 ms → 100 ms (×1.9), HEALTHY → STRESSED".
func latencyChange(a, b *Row) string {
	s := fmt.Sprintf("p95 %s → %s (×%.1f)", report.Millis(a.P95MS), report.Millis(b.P95MS), b.P95MS/a.P95MS)
	if a.State != b.State {
		s += ", " + a.State + " → " + b.State
	}
	return s
}

// loadText names the rate a row's step offered, " (50/s)", or "" for
// the closed model's users.
func loadText(r *Row) string {
	if r.TargetRate > 0 {
		return " (" + report.Rate(r.TargetRate) + ")"
	}
	return ""
}

// lessons says what the shapes tell, from the data: workers without CPU,
// memory, scaling with CPUs.
func lessons(rows []Row) []string {
	measured := slices.DeleteFunc(slices.Clone(rows), func(c Row) bool { return !c.comparable() })
	out := notCompared(rows)
	if l := unlimitedLesson(rows); l != "" {
		out = append(out, l)
	}
	out = append(out, workersWithoutCPU(rows)...)
	out = append(out, memoryLessons(measured)...)
	if l := cpuScaling(measured); l != "" {
		out = append(out, l)
	}
	return out
}

// notCompared names the shapes whose figures do not measure the shape
// (INVALID, GENERATOR LIMITED...): they are compared with none. The shapes
// that failed to start or whose target died say why below the lessons.
func notCompared(rows []Row) []string {
	var out []string
	for _, c := range rows {
		switch c.State {
		case results.Healthy, results.Stressed, results.Overloaded, FailedToStart, TargetDied:
		default:
			out = append(out, fmt.Sprintf("%s is not compared: %s (its figures do not measure the shape)", c.Name, c.State))
		}
	}
	return out
}

// unlimitedLesson says that shapes found no limit (the load or the
// search's max was below their edge), and so are not compared by
// throughput; "" when every judged shape found one.
func unlimitedLesson(rows []Row) string {
	unlimited, judged, find := 0, 0, false
	for _, c := range rows {
		switch c.State {
		case results.Healthy, results.Stressed, results.Overloaded:
			judged++
			if c.Unlimited {
				unlimited++
			}
		}
		find = find || c.Edge > 0
	}
	if unlimited == 0 {
		return ""
	}
	of := ""
	if unlimited < judged {
		of = fmt.Sprintf(" (%d of %d shapes)", unlimited, judged)
	}
	if find {
		return fmt.Sprintf("the search found no limit where a shape passed every level up to its max%s: its edge is above it, so it is not compared below (raise find's max)", of)
	}
	return fmt.Sprintf("the load found no limit where a shape served all the rate offered%s: its throughput is the load's, so it is not compared below, its latency at that load is (raise the rate, or sweep with --find)", of)
}

// workersWithoutCPU compares more workers on the same CPU and memory, by
// throughput (where it measures the shapes) and by latency at the same
// load (which it does even when both served all of it).
func workersWithoutCPU(rows []Row) []string {
	var out []string
	for _, a := range rows {
		for _, b := range rows {
			if !a.verdicted() || !b.verdicted() || a.CPUs != b.CPUs || a.MemoryMB != b.MemoryMB || b.Workers <= a.Workers {
				continue
			}
			less := a.comparable() && b.comparable() && b.Throughput < 0.95*a.Throughput
			slower := slowerAtSameLoad(&a, &b)
			head := fmt.Sprintf("%d workers on %s CPU", b.Workers, formatCPUs(b.CPUs))
			than := fmt.Sprintf("than %d on the same CPU (%s)", a.Workers, formatMemory(a.MemoryMB))
			switch {
			case less && slower:
				out = append(out, fmt.Sprintf("%s served %.0f %% less %s, and answered slower: %s: workers without CPU make it worse",
					head, 100*(1-b.Throughput/a.Throughput), than, latencyChange(&a, &b)))
			case less:
				out = append(out, fmt.Sprintf("%s served %.0f %% less %s: workers without CPU make it worse",
					head, 100*(1-b.Throughput/a.Throughput), than))
			case slower:
				out = append(out, fmt.Sprintf("%s answered slower %s at the same load%s: %s: workers without CPU cost latency",
					head, than, loadText(&b), latencyChange(&a, &b)))
			}
		}
	}
	return out
}

// memoryLessons compare the measured shapes of the same workers and CPUs
// with more memory.
func memoryLessons(measured []Row) []string {
	var out []string
	for _, a := range measured {
		for _, b := range measured {
			if a.Workers == b.Workers && a.CPUs == b.CPUs && b.MemoryMB > a.MemoryMB {
				out = append(out, fmt.Sprintf("memory %s → %s (%dw, %sc) changed throughput by %+.0f %%",
					formatMemory(a.MemoryMB), formatMemory(b.MemoryMB), a.Workers, formatCPUs(a.CPUs), 100*(b.Throughput/a.Throughput-1)))
			}
		}
	}
	return out
}

// cpuScaling compares the best measured shape at the fewest CPUs with the
// best at the most; "" with fewer than two CPU counts.
func cpuScaling(measured []Row) string {
	bestAt := map[float64]Row{}
	for _, c := range measured {
		if c.CPUsEffective > 0 && c.Throughput > bestAt[c.CPUsEffective].Throughput {
			bestAt[c.CPUsEffective] = c
		}
	}
	if len(bestAt) < 2 {
		return ""
	}
	cpus := slices.Sorted(maps.Keys(bestAt))
	lo, hi := bestAt[cpus[0]], bestAt[cpus[len(cpus)-1]]
	ratio := hi.Throughput / lo.Throughput
	return fmt.Sprintf("scaling from %s to %s CPUs: %.1f× the throughput (%.0f %% of linear, %s → %s)",
		formatCPUs(lo.CPUsEffective), formatCPUs(hi.CPUsEffective), ratio, 100*ratio/(hi.CPUsEffective/lo.CPUsEffective), lo.Name, hi.Name)
}

// write stores r at path through a temporary file and a rename
// (results.WriteFile, which has descriptors kept for it).
func (r *Result) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := results.WriteFile(path, append(data, '\n'), results.Private); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// decide sets the sweep's outcome and Passed from its rows, as
// results.Result's decide does for a run: it fails when a shape's run is
// INVALID, when (strict, the default) a shape's target died or did not
// start, when no shape held its load, and when --need found no shape; it
// could not be carried out when every shape failed to start.
func (r *Result) decide() {
	o := results.Outcome{Strict: r.strict, Reasons: []results.Reason{}}
	add := func(kind, text string) { o.Reasons = append(o.Reasons, results.Reason{Kind: kind, Text: text}) }
	if r.Unfinished {
		add(results.ReasonUnfinished, "ceiling stopped before the sweep ended (killed, or a second Ctrl-C): the file is partial")
	}
	if r.Interrupted {
		add(results.ReasonInterrupted, "the sweep was interrupted (SIGINT or SIGTERM)")
	}
	started, held := 0, 0
	for _, c := range r.Configs {
		switch {
		case c.State == FailedToStart:
			if r.strict {
				add(results.ReasonInvalid, fmt.Sprintf("shape %s failed to start: %s", c.Name, c.Error))
			}
			continue
		case c.State == TargetDied && r.strict:
			add(results.ReasonInvalid, fmt.Sprintf("shape %s: TARGET DIED (%s)", c.Name, c.Died))
		case c.State == results.Invalid:
			add(results.ReasonInvalid, fmt.Sprintf("shape %s is INVALID (its result.json says why: %s)", c.Name, c.Result))
		}
		started++
		if c.holds() {
			held++
		}
	}
	switch {
	case len(r.Configs) > 0 && started == 0:
		add(results.ReasonNotStarted, "every shape failed to start: the sweep measured nothing")
	case len(r.Configs) > 0 && held == 0 && !r.Interrupted && !r.Unfinished:
		add(results.ReasonNoStepPassed, "no shape held its load: each was OVERLOADED, GENERATOR LIMITED, INVALID or dead, or failed its SLO")
	case r.Need > 0 && !r.Interrupted && !r.Unfinished && !slices.ContainsFunc(r.Configs, func(c Row) bool { return c.Needed }):
		add(results.ReasonNoStepPassed, fmt.Sprintf("no shape holds the %s/s that --need asks for", report.Rate(r.Need)))
	}
	o.Status = results.StatusOf(o.Reasons)
	r.Outcome, r.Passed = o, o.Passed()
}
