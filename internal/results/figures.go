package results

import (
	"errors"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Figures is what was measured of one step, and what is said of it, as
// result.json holds them: counts, bytes, error classes, histograms, the
// per-scenario and per-tag breakdowns, logins, the generator's figures,
// the target's and the deliveries', the per-second series, the trace, and
// among them the verdict, its notes and warnings. Step embeds it (and
// adds which generators made a merged step after it), so its fields are
// in the order result.json writes them.
//
// It is the one value a step's figures are put together as: MergeFigures
// for the parts of one step that several generators ran (agents,
// --segment), CombineFigures for the repeats of one step (--repeat), each
// field by its rule in stepRules (rules.go), so that no field is summed by
// hand anywhere else. Histograms are encoded (HdrHistogram V2
// compressed, base64); means are kept with the count they are a mean of.
type Figures struct {
	Index       int    `json:"index"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Model       string `json:"model"`
	// Scenario is the scenario this step ran alone (load.each); empty for
	// the plan's weighted mix.
	Scenario   string  `json:"scenario,omitempty"`
	TargetRate float64 `json:"target_rate,omitempty"`
	VUs        int     `json:"vus,omitempty"`
	DurationS  float64 `json:"duration_s"`
	WarmupS    float64 `json:"warmup_s"`
	// Sent counts the exchanges (requests, websocket frames) sent of the
	// step's iterations, and Completed those that ended: a flow of two
	// requests is two. Iterations counts the iterations (a flow whole).
	Sent       int64            `json:"sent"`
	Iterations int64            `json:"iterations"`
	Completed  int64            `json:"completed"`
	OK         int64            `json:"ok"`
	Limited    int64            `json:"limited"`
	Failed     int64            `json:"failed"`
	Errors     map[string]int64 `json:"errors"`
	// Status4xx is the status of the step's 4xx failures when they all had
	// the same one (-1: several).
	Status4xx    int                             `json:"status_4xx,omitempty"`
	AchievedRate float64                         `json:"achieved_rate"`
	Throughput   float64                         `json:"throughput"`
	ErrorRate    float64                         `json:"error_rate"`
	Late         int64                           `json:"late"`
	NotSent      int64                           `json:"not_sent"`
	Retried      int64                           `json:"retried"`
	Redirected   int64                           `json:"redirected_ok"`
	RetryAfters  int64                           `json:"retry_afters"`
	RetryAfterS  float64                         `json:"retry_after_max_s"`
	MaxLagMS     float64                         `json:"max_lag_ms"`
	MeanLagMS    float64                         `json:"mean_lag_ms"`
	SettleS      float64                         `json:"settle_s,omitempty"`
	Workers      int                             `json:"workers"`
	BytesIn      int64                           `json:"bytes_in"`
	BytesOut     int64                           `json:"bytes_out"`
	LatencyMS    metrics.Latency                 `json:"latency_ms"`
	ServiceMS    metrics.Latency                 `json:"service_ms"`
	Scenarios    []Breakdown                     `json:"scenarios"`
	Logins       *Logins                         `json:"logins,omitempty"`
	Tags         map[string]map[string]Breakdown `json:"tags"`
	WebSocket    *Sockets                        `json:"websocket,omitempty"`
	// SLOPassed says whether the step's SLO terms held (Evaluate); nil
	// without terms, and for a partial step. It and the verdict's fields below are said of the
	// figures, not measured: the merge of parts leaves them to whoever
	// judges the merged step, the combination of repeats keeps the last
	// repeat's until the step is judged again.
	SLOPassed *bool `json:"slo_passed,omitempty"`
	// Passed says whether the step passed: HEALTHY or STRESSED and its SLO
	// held (with repeats, in most of them). Nil for a step cut short, which
	// is not judged.
	Passed           *bool      `json:"passed,omitempty"`
	Verdict          string     `json:"verdict,omitempty"`
	VerdictReason    string     `json:"verdict_reason,omitempty"`
	VerdictReasons   []string   `json:"verdict_reasons"`
	GeneratorLimited bool       `json:"generator_limited"`
	Generator        *Generator `json:"generator,omitempty"`
	Target           *Target    `json:"target,omitempty"`
	Delivery         *Delivery  `json:"delivery,omitempty"`
	// Notes are said of the step when it is judged (Judge); Warnings of its
	// figures by whoever measured them (the target, the sinks, the
	// sockets, the scenarios), and by a merge of each part's, prefixed with
	// its name.
	Notes       []string `json:"notes,omitempty"`
	Warnings    []string `json:"warnings"`
	Histogram   string   `json:"histogram"`
	ServiceHist string   `json:"service_histogram"`
	Series      []Point  `json:"series"`
	// Events names the events that happened in this step (Result.Events):
	// its figures include what they cost.
	Events []string `json:"events,omitempty"`
	// Trace is the step's exchanges one by one around its events, which
	// their recovery is measured from; nil in a step without events.
	Trace *Trace `json:"trace,omitempty"`
	// Repeat is the spread over the run's repeats (--repeat N > 1).
	Repeat *Repeat `json:"repeat,omitempty"`
	// StartS is when the step began (its warm-up), on the series clock:
	// seconds from the run's start, as Point.T. A merge of segments lines
	// their seconds up on it.
	StartS float64 `json:"start_s,omitempty"`
}

// MergeFigures puts together the figures of one step that several
// generators ran, each its share of the load (agents, --segment), into
// what a single generator would have measured: each field by its Parts
// rule in stepRules (counts and rates added, histograms merged and their
// percentiles read again, never averaged). The parts must be the same step
// of the same model. What is said of the figures is left to whoever
// judges the merged step: the verdict's fields are empty, and Warnings is
// empty for MergeSteps to list each part's under its name.
func MergeFigures(parts []Figures) (Figures, error) {
	if len(parts) == 0 {
		return Figures{}, errors.New("merge: no step to merge")
	}
	return put(stepRules, true, parts)
}

// CombineFigures puts together the figures of the repeats of one step, in
// run order, each field by its Repeats rule in stepRules: counts added,
// rates and percentiles the medians of the repeats', histograms merged,
// and Repeat holding each figure's values and spread; the last repeat
// gives what is not a figure of the repeats (model, level, window, target,
// series) and its verdict, until the combined step is judged again;
// warnings are every repeat's, once. The caller leaves out interrupted
// repeats.
func CombineFigures(reps []Figures) (Figures, error) {
	if len(reps) == 0 {
		return Figures{}, nil
	}
	return put(stepRules, false, reps)
}
