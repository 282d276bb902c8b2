package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// Fingerprint is a short hash of the plan as it runs (flags applied):
// the segments of one plan share it.
func Fingerprint(p *plan.Plan) string {
	q := *p
	q.File = ""
	data, err := yaml.Marshal(&q)
	if err != nil {
		data = []byte(fmt.Sprintf("%#v", q))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// segmentOf is what a --segment run's result.json says of its share.
func segmentOf(p *plan.Plan, o *Options) *results.Segment {
	if o.Segment.Whole() {
		return nil
	}
	return &results.Segment{I: o.Segment.I + 1, N: o.Segment.N, Plan: Fingerprint(p), SLO: p.SLO, Rules: rulesOf(p), Strict: strictOf(p)}
}

// MinOverlap is the share of the shortest of a step's windows that the
// segments' windows of that step must have in common to be merged as one
// load: segments that ran at different times add up to a rate the target
// never received.
const MinOverlap = 0.5

// Merge puts the results of the N segments of one run (ceiling run
// --segment i/N, each on its machine) together, as `ceiling merge` does:
// step by step with results.MergeSteps (histograms merged, counts and
// rates added), then judged with the plan's SLO and verdict rules, which
// the segments carry. It refuses inputs that are not every segment of one
// plan, once each, with the same steps, and segments whose steps did not
// run at the same time (MinOverlap), unless apart is set: their merged
// steps then say so.
func Merge(parts []*results.Result, command string, apart bool) (*results.Result, error) {
	if err := checkSegments(parts); err != nil {
		return nil, err
	}
	var notTogether []string
	for i := range parts[0].Steps {
		if why := overlap(parts, i); why != "" {
			if !apart {
				return nil, badInput("merge: %s: the merged step would claim a load the target never received (--allow-apart merges them anyway, marked)", why)
			}
			notTogether = append(notTogether, why)
		}
	}
	first := parts[0].Segment
	terms, err := slo.Parse(first.SLO)
	if err != nil {
		return nil, badInput("merge: the segments' slo: %w", err)
	}
	out := mergedHeader(parts, command)
	names := make([]string, len(parts))
	for k, r := range parts {
		names[k] = segmentName(r.Segment)
	}
	for i := range parts[0].Steps {
		m, err := mergeStep(parts, i, names)
		if err != nil {
			return nil, err
		}
		out.Steps = append(out.Steps, m)
	}
	for _, why := range notTogether {
		out.Warnings = append(out.Warnings, "merged with --allow-apart: "+why+": its rates add up to a load the target never received at once")
	}
	judgeMerged(out, first, terms)
	if out.Unfinished {
		return out, errors.New("merge: a segment's result is unfinished (its run was killed): the merge is written, and does not pass")
	}
	return out, nil
}

// checkSegments refuses parts unless they are every segment of one plan
// and split, once each, with as many steps as the first.
func checkSegments(parts []*results.Result) error {
	if len(parts) == 0 {
		return badInput("merge: no result given")
	}
	first := parts[0].Segment
	if first == nil {
		return badInput("merge: the first result is not a segment of a run (ceiling run --segment i/N)")
	}
	seen := make([]bool, first.N+1)
	for k, r := range parts {
		sg := r.Segment
		switch {
		case sg == nil:
			return badInput("merge: result %d is not a segment of a run", k+1)
		case sg.Plan != first.Plan || sg.N != first.N:
			return badInput("merge: result %d is segment %d/%d of another plan or split (plan %s, not %s of %d)", k+1, sg.I, sg.N, sg.Plan, first.Plan, first.N)
		case sg.I < 1 || sg.I > sg.N || seen[sg.I]:
			return badInput("merge: segment %d/%d given twice (or out of range)", sg.I, sg.N)
		case len(r.Steps) != len(parts[0].Steps):
			return badInput("merge: segment %d/%d has %d steps, segment %d/%d %d: a segment cut short cannot be merged", sg.I, sg.N, len(r.Steps), first.I, first.N, len(parts[0].Steps))
		}
		seen[sg.I] = true
	}
	if missing := slices.Index(seen[1:], false); missing >= 0 {
		return badInput("merge: segment %d/%d is missing: the merge of fewer segments would be a smaller load", missing+1, first.N)
	}
	return nil
}

// overlap says how the windows of step i of the segments failed to
// overlap by MinOverlap of the shortest, with their times; "" when they
// did. A window is the step's counted seconds on its segment's wall clock
// (its run's start, plus the step's start and warm-up).
func overlap(parts []*results.Result, i int) string {
	var from, to time.Time
	shortest := time.Duration(math.MaxInt64)
	var spans []string
	for k, r := range parts {
		s := r.Steps[i]
		start := r.StartedAt.Add(seconds(s.StartS + s.WarmupS))
		end := start.Add(seconds(s.DurationS))
		if k == 0 || start.After(from) {
			from = start
		}
		if k == 0 || end.Before(to) {
			to = end
		}
		shortest = min(shortest, end.Sub(start))
		spans = append(spans, fmt.Sprintf("%s %s–%s", segmentName(r.Segment), start.UTC().Format("15:04:05.000"), end.UTC().Format("15:04:05.000")))
	}
	if shortest <= 0 || float64(to.Sub(from)) >= MinOverlap*float64(shortest) {
		return ""
	}
	return fmt.Sprintf("step %d of the segments did not run at the same time (%s UTC)", i+1, strings.Join(spans, ", "))
}

// seconds is a float of seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// segmentName is how the merged result names a segment: "segment i/N".
func segmentName(sg *results.Segment) string {
	return fmt.Sprintf("segment %d/%d", sg.I, sg.N)
}

// mergedHeader is the merged result without its steps: the first
// segment's plan and target, each segment as an agent, their warnings
// (each prefixed with its segment's name) and events, the earliest start
// and the latest end, interrupted or unfinished when any segment was.
func mergedHeader(parts []*results.Result, command string) *results.Result {
	out := &results.Result{Schema: results.Schema, Command: command, Name: parts[0].Name, Target: parts[0].Target, Control: parts[0].Control,
		Host: parts[0].Host, StartedAt: parts[0].StartedAt, Warnings: []string{}, Steps: []results.Step{}, DuplicateIDs: []results.DuplicateID{}, Invalid: []string{}}
	var ended time.Time
	for _, r := range parts {
		name := segmentName(r.Segment)
		out.Agents = append(out.Agents, results.Agent{Addr: name, Version: r.Host.Version, Host: r.Host.Hostname, CPUs: r.Host.CPUs})
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Unfinished = out.Unfinished || r.Unfinished
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, name+": "+w)
		}
		out.Events = append(out.Events, r.Events...)
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.EndedAt != nil && r.EndedAt.After(ended) {
			ended = *r.EndedAt
		}
	}
	if !ended.IsZero() {
		out.EndedAt = &ended
	}
	return out
}

// mergeStep merges step i of every segment (named by names), lined up
// on the first segment's step start.
func mergeStep(parts []*results.Result, i int, names []string) (results.Step, error) {
	steps := make([]results.Step, len(parts))
	for k, r := range parts {
		steps[k] = r.Steps[i]
		if err := steps[k].LineUp(parts[0].Steps[i].StartS); err != nil {
			return results.Step{}, badInput("merge: step %d of %s: %w", i+1, names[k], err)
		}
	}
	m, err := results.MergeSteps(steps, names)
	if err != nil {
		return results.Step{}, badInput("merge: step %d: %w", i+1, err)
	}
	return m, nil
}

// judgeMerged judges the merged result with the plan's SLO (terms),
// verdict rules and strictness, which the first segment carries, as the
// run's own steps are judged (results.Result.Judge): an interrupted or
// unfinished segment fails the merge.
func judgeMerged(out *results.Result, first *results.Segment, terms []slo.Term) {
	out.Evaluate(terms)
	rules := first.Rules
	rules.Strict = first.Strict
	out.Judge(rules)
}

// MergeFiles reads the segments' result files, merges them (Merge, with
// apart) and writes the merged result to out. args is the command line,
// for the merged result's command.
func MergeFiles(paths []string, out string, args []string, apart bool) (*results.Result, error) {
	var parts []*results.Result
	for _, p := range paths {
		r, err := results.Read(p)
		if err != nil {
			return nil, badInput("merge: %w", err)
		}
		parts = append(parts, r)
	}
	res, err := Merge(parts, reproduce(secret.Names(nil).Args(args)), apart)
	if res == nil {
		return nil, err
	}
	if werr := results.Write(out, res, results.Private); werr != nil {
		return res, errors.Join(err, werr)
	}
	return res, err
}
