package results

import (
	"errors"
	"reflect"
	"sync"

	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Figures is what was measured of one step: counts, bytes, error classes,
// histograms, the per-scenario and per-tag breakdowns, logins, the
// generator's figures, the per-second series, the target's and the
// deliveries' figures, the trace. It is the one value a step's figures are
// put together as: MergeFigures for the parts of one step that several
// generators ran (agents, --segment), CombineFigures for the repeats of
// one step (--repeat), each field by its rule in stepRules (rules.go), so
// that no field is summed by hand anywhere else.
//
// Step is its projection in result.json (FiguresOf, Project): every field
// of Figures is the Step field of the same name and type, serialized there
// without loss (histograms encoded, HdrHistogram V2 compressed, base64;
// means with the count they are a mean of). What Step has besides is said
// of the figures, not measured: the verdict, its notes and warnings, and
// which generators made a merged step (Parts), set by whoever judges or
// merges it. The fields mean what Step's do.
type Figures struct {
	Index        int
	Interrupted  bool
	Model        string
	Scenario     string
	TargetRate   float64
	VUs          int
	DurationS    float64
	WarmupS      float64
	StartS       float64
	Sent         int64
	Iterations   int64
	Completed    int64
	OK           int64
	Limited      int64
	Failed       int64
	Errors       map[string]int64
	Status4xx    int
	AchievedRate float64
	Throughput   float64
	ErrorRate    float64
	Late         int64
	NotSent      int64
	Retried      int64
	Redirected   int64
	RetryAfters  int64
	RetryAfterS  float64
	MaxLagMS     float64
	MeanLagMS    float64
	SettleS      float64
	Workers      int
	BytesIn      int64
	BytesOut     int64
	Histogram    string
	ServiceHist  string
	LatencyMS    metrics.Latency
	ServiceMS    metrics.Latency
	Scenarios    []Breakdown
	Tags         map[string]map[string]Breakdown
	Logins       *Logins
	WebSocket    *Sockets
	Generator    *Generator
	Target       *Target
	Delivery     *Delivery
	Series       []Point
	Events       []string
	Trace        *Trace
	Repeat       *Repeat
}

// FiguresOf returns the figures s holds.
func FiguresOf(s *Step) Figures {
	var f Figures
	fv, sv := reflect.ValueOf(&f).Elem(), reflect.ValueOf(s).Elem()
	for _, p := range projection() {
		fv.Field(p.figure).Set(sv.Field(p.step))
	}
	return f
}

// Project writes f into s's figures, leaving what s says of them (its
// verdict, notes, warnings, parts) as it is.
func (f *Figures) Project(s *Step) {
	fv, sv := reflect.ValueOf(f).Elem(), reflect.ValueOf(s).Elem()
	for _, p := range projection() {
		sv.Field(p.step).Set(fv.Field(p.figure))
	}
}

// projection pairs each field of Figures with Step's of the same name.
var projection = sync.OnceValue(func() []struct{ figure, step int } {
	ft, st := reflect.TypeFor[Figures](), reflect.TypeFor[Step]()
	out := make([]struct{ figure, step int }, ft.NumField())
	for i := range ft.NumField() {
		f := ft.Field(i)
		s, ok := st.FieldByName(f.Name)
		if !ok || s.Type != f.Type || len(s.Index) != 1 {
			panic("results: Figures." + f.Name + " is not a field of Step of the same type")
		}
		out[i].figure, out[i].step = i, s.Index[0]
	}
	return out
})

// MergeFigures puts together the figures of one step that several
// generators ran, each its share of the load (agents, --segment), into
// what a single generator would have measured: each field by its Parts
// rule in stepRules (counts and rates added, histograms merged and their
// percentiles read again, never averaged). The parts must be the same step
// of the same model.
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
// series). The caller leaves out interrupted repeats.
func CombineFigures(reps []Figures) (Figures, error) {
	if len(reps) == 0 {
		return Figures{}, nil
	}
	return put(stepRules, false, reps)
}
