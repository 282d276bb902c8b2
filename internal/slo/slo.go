package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
)

// Term is one threshold.
type Term struct {
	// Text is the term as written, trimmed.
	Text string
	// Scenario restricts the term to one scenario; empty means all.
	Scenario string
	// Metric is the figure compared, e.g. "p99" or "errors".
	Metric string
	// Op is the comparison: "<", "<=", ">" or ">=".
	Op string
	// Value is the bound: milliseconds for latencies, percent for errors
	// and limited, a fraction for rate.
	Value float64
}

// SyntaxError is a parse error at a byte offset of the input.
type SyntaxError struct {
	// Offset is the 0-based byte offset of the problem.
	Offset int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Offset+1, e.Msg) }

type kind int

const (
	duration kind = iota
	percent
	fraction
	perSecond
)

var metricKinds = map[string]kind{
	"p50": duration, "p90": duration, "p95": duration, "p99": duration, "p999": duration,
	"max": duration, "mean": duration, "errors": percent, "limited": percent, "rate": fraction,
	"delivered": percent, "delivery_p50": duration, "delivery_p99": duration,
	"throughput": perSecond, "recovery": duration,
}

// metricNames are the metrics in the order an error lists them, the one
// a typo is taken for first among those as near.
var metricNames = []string{"p50", "p90", "p95", "p99", "p999", "max", "mean", "errors", "limited", "delivered",
	"delivery_p50", "delivery_p99", "rate", "throughput", "recovery"}

// oneOf writes names as "a", "a" or "b", "a", "b" or "c".
func oneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// Recovery is the metric of the run's events: how long the target took
// to recover from each (see Figures.Events). It is the run's, not a
// scenario's, and is judged over every event of the run, not in each step.
const Recovery = "recovery"

// OpenOnly lists the metrics that compare with a target rate, which only
// the open model has: a closed-model plan using one is refused.
var OpenOnly = []string{"rate"}

// Parse reads a comma-separated list of terms. An empty string has none.
func Parse(s string) ([]Term, error) {
	var terms []Term
	off := 0
	for _, part := range strings.Split(s, ",") {
		lead := len(part) - len(strings.TrimLeft(part, " \t"))
		text := strings.TrimSpace(part)
		if text == "" {
			if strings.TrimSpace(s) == "" {
				return nil, nil
			}
			return nil, &SyntaxError{Offset: off + lead, Msg: "empty threshold"}
		}
		t, err := parseTerm(text)
		if err != nil {
			err.Offset += off + lead
			return nil, err
		}
		terms = append(terms, t)
		off += len(part) + 1
	}
	return terms, nil
}

func parseTerm(text string) (Term, *SyntaxError) {
	i := strings.IndexAny(text, "<>")
	if i < 0 {
		return Term{}, &SyntaxError{Msg: fmt.Sprintf("%q has no comparison (<, <=, >, >=)", text)}
	}
	t := Term{Text: text, Op: text[i : i+1]}
	rest := i + 1
	if rest < len(text) && text[rest] == '=' {
		t.Op += "="
		rest++
	}
	name := strings.TrimSpace(text[:i])
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		t.Scenario, name = name[:dot], name[dot+1:]
		if t.Scenario == "" {
			return Term{}, &SyntaxError{Msg: "empty scenario name before '.'"}
		}
	}
	k, ok := metricKinds[name]
	if !ok {
		if near := plan.Nearest(strings.ToLower(name), metricNames); len(near) > 0 {
			return Term{}, &SyntaxError{Msg: fmt.Sprintf("unknown metric %q (did you mean %s?)", name, oneOf(near))}
		}
		return Term{}, &SyntaxError{Msg: fmt.Sprintf("unknown metric %q (want p50, p90, p95, p99, p999, max, mean, errors, limited, delivered, delivery_p50, delivery_p99, rate, throughput or recovery)", name)}
	}
	if name == Recovery && t.Scenario != "" {
		return Term{}, &SyntaxError{Msg: fmt.Sprintf("recovery is measured on the run's events, not on a scenario: write %q", strings.TrimSpace(text[strings.LastIndexByte(text[:i], '.')+1:]))}
	}
	t.Metric = name
	raw := strings.TrimSpace(text[rest:])
	valOff := rest + len(text[rest:]) - len(strings.TrimLeft(text[rest:], " \t"))
	v, err := parseValue(k, raw)
	if err != nil {
		return Term{}, &SyntaxError{Offset: valOff, Msg: err.Error()}
	}
	t.Value = v
	return t, nil
}

func parseValue(k kind, raw string) (float64, error) {
	switch k {
	case duration:
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("want a duration such as \"200ms\", got %q", raw)
		}
		return float64(d) / float64(time.Millisecond), nil
	case percent:
		num, ok := strings.CutSuffix(raw, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if !ok || err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return 0, fmt.Errorf("want a percentage such as \"1%%\", got %q", raw)
		}
		return v, nil
	case perSecond:
		num := strings.TrimSpace(strings.TrimSuffix(raw, "/s"))
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, fmt.Errorf("want responses per second such as \"50/s\", got %q", raw)
		}
		return v, nil
	default:
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 10 {
			return 0, fmt.Errorf("want a fraction of the target rate such as \"0.95\", got %q", raw)
		}
		return v, nil
	}
}

// Figures are what a term is evaluated against.
type Figures struct {
	// Latency holds the response-time percentiles in milliseconds.
	Latency metrics.Latency
	// Completed, Failed and Limited count exchanges.
	Completed, Failed, Limited int64
	// Achieved and Target are rates per second; Target 0 means none (closed model).
	Achieved, Target float64
	// Throughput is the responses (OK or limited) per second of the window.
	Throughput float64
	// Expected and Delivered count the delivery ids expected at sinks and
	// those that arrived (by the step's end, for delivered>=); Arrived
	// counts those that arrived at all, which delivery latency terms need.
	Expected, Delivered, Arrived int64
	// Delivery summarises the send → delivery latency in milliseconds,
	// the ids still missing counted at their wait so far: where they reach
	// a percentile, it is a lower bound.
	Delivery metrics.Latency
	// DeliveryUpper, when ids are missing, holds each percentile's upper
	// bound (+Inf where the missing ids leave it none); nil when none is
	// missing and Delivery is exact. A delivery latency term with "<" or
	// "<=" passes only when the upper bound does: a lower bound under the
	// threshold proves nothing.
	DeliveryUpper *metrics.Latency
	// Events counts the events (plan events: a pause, a restart) the
	// recovery terms judge, Unrecovered those of them that did not recover
	// (or whose recovery could not be measured), and RecoveryMS is the
	// worst one's recovery in milliseconds (for one that did not recover:
	// how long it was watched without recovering, a lower bound).
	Events, Unrecovered int
	RecoveryMS          float64
}

// OfEvents reports whether the term judges the run's events (recovery)
// rather than a step's exchanges: it reads Figures.Events, and a step
// without events gives it no samples.
func (t Term) OfEvents() bool { return t.Metric == Recovery }

// Eval returns the term's measured value and whether the threshold holds.
// With no completed exchanges it fails; a recovery term fails with no
// event, or with one that did not recover, whatever its bound.
func (t Term) Eval(f Figures) (float64, bool) {
	if t.OfEvents() {
		if f.Events == 0 || f.Unrecovered > 0 {
			return f.RecoveryMS, false
		}
		return f.RecoveryMS, compare(t.Op, f.RecoveryMS, t.Value)
	}
	var v float64
	switch t.Metric {
	case "p50":
		v = f.Latency.P50
	case "p90":
		v = f.Latency.P90
	case "p95":
		v = f.Latency.P95
	case "p99":
		v = f.Latency.P99
	case "p999":
		v = f.Latency.P999
	case "max":
		v = f.Latency.Max
	case "mean":
		v = f.Latency.Mean
	case "errors":
		v = share(f.Failed, f.Completed)
	case "limited":
		v = share(f.Limited, f.Completed)
	case "delivered":
		if f.Expected == 0 {
			return 0, false // nothing expected: no evidence
		}
		v = share(f.Delivered, f.Expected)
	case "delivery_p50", "delivery_p99":
		if f.Arrived == 0 && f.DeliveryUpper == nil {
			return 0, false // nothing delivered, nothing waiting: no evidence
		}
		v = deliveryPercentile(t.Metric, f.Delivery)
		if f.DeliveryUpper != nil && strings.HasPrefix(t.Op, "<") {
			// Under the bound only if the missing ids cannot lift it over.
			return v, f.Completed > 0 && compare(t.Op, deliveryPercentile(t.Metric, *f.DeliveryUpper), t.Value)
		}
	case "rate":
		if f.Target <= 0 {
			return 0, false // no target rate (plans refuse rate terms in the closed model)
		}
		v = f.Achieved / f.Target
	case "throughput":
		v = f.Throughput
	}
	if f.Completed == 0 {
		return v, false
	}
	return v, compare(t.Op, v, t.Value)
}

// LowerBound reports whether the value Eval gives for the term in f is
// only a lower bound: a delivery percentile that the ids still missing
// reach, so that the true figure may be higher.
func (t Term) LowerBound(f Figures) bool {
	if t.Metric != "delivery_p50" && t.Metric != "delivery_p99" || f.DeliveryUpper == nil {
		return false
	}
	return deliveryPercentile(t.Metric, *f.DeliveryUpper) > deliveryPercentile(t.Metric, f.Delivery)
}

func deliveryPercentile(metric string, l metrics.Latency) float64 {
	if metric == "delivery_p50" {
		return l.P50
	}
	return l.P99
}

// compare reports whether v op bound holds.
func compare(op string, v, bound float64) bool {
	switch op {
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	}
	return v >= bound
}

func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
