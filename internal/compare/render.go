package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// JSON writes r as indented JSON.
func JSON(w io.Writer, r *Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the test's rule keeps its ">"
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode comparison: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Text writes r for a terminal: what was compared, the test, the table of
// every change, notes, thresholds crossed and the verdict.
func Text(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ceiling compare: %s\n", oneLine(r.Sides()))
	fmt.Fprintf(&b, "test: %s\n%s\n\n", r.Test, r.Tally())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(Columns, "\t"))
	for i := range r.Changes {
		cells := r.Changes[i].Cells()
		for j := range cells {
			cells[j] = oneLine(cells[j])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	b.WriteString("\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", oneLine(n))
	}
	for _, x := range r.Crossed {
		fmt.Fprintf(&b, "threshold crossed: %s\n", oneLine(x))
	}
	fmt.Fprintf(&b, "verdict: %s\n", r.Headline())
	_, err := io.WriteString(w, b.String())
	return err
}

// Markdown writes r for a pull-request comment: the verdict, the test,
// the significant changes, and every comparison folded away.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### ceiling compare: **%s**\n\n", r.Headline())
	fmt.Fprintf(&b, "%s (baseline, %s) → %s (%s)\n\n", codeSpan(r.A), runs(r.RepeatsA), codeSpan(r.B), runs(r.RepeatsB))
	fmt.Fprintf(&b, "**Test:** %s. %s.\n\n", r.Test, r.Tally())
	var sig []int
	for i, c := range r.Changes {
		if c.Significant || c.Suppressed || c.Moved || c.Threshold != "" {
			sig = append(sig, i)
		}
	}
	switch {
	case r.HostBusy || r.TailOnly:
		fmt.Fprintf(&b, "**Could not tell:** %s, so no change is called significant (`--fail-on-regression` exits 4). ", mdEscape(r.Why))
		if slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Suppressed }) {
			b.WriteString("The changes that would have been significant, and the control's moves:\n\n")
		} else {
			b.WriteString("No change would have been significant either. The control's moves:\n\n")
		}
		mdTable(&b, r, sig)
	case len(sig) == 0:
		b.WriteString("No significant change.\n\n")
	default:
		mdTable(&b, r, sig)
	}
	for _, x := range r.Crossed {
		fmt.Fprintf(&b, "- threshold crossed: %s\n", mdEscape(x))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", mdEscape(n))
	}
	if len(r.Crossed)+len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	all := make([]int, len(r.Changes))
	for i := range all {
		all[i] = i
	}
	fmt.Fprintf(&b, "<details><summary>All %d changes</summary>\n\n", len(r.Changes))
	mdTable(&b, r, all)
	b.WriteString("</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func mdTable(b *strings.Builder, r *Report, rows []int) {
	b.WriteString("| step | scenario | metric | A | B | Δ | noise | change |\n|---|---|---|---:|---:|---:|---:|---|\n")
	for _, i := range rows {
		c := &r.Changes[i]
		change := changeText(c)
		if c.Significant {
			change = "**" + change + "**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(levelOf(c)), mdEscape(orAll(c.Scenario)), c.Metric,
			value(c.Metric, c.A), value(c.Metric, c.B), deltaText(c), noiseText(c), change)
	}
	b.WriteString("\n")
}

// mdEscape makes s safe in a Markdown table cell or list item: on one
// line, its pipes escaped, and <, > and & as HTML entities, so that a
// scenario's name cannot close the <details> or add HTML.
func mdEscape(s string) string {
	return mdReplacer.Replace(oneLine(s))
}

var mdReplacer = strings.NewReplacer("|", `\|`, "&", "&amp;", "<", "&lt;", ">", "&gt;")

// oneLine replaces line breaks and tabs in s with spaces: names in a
// table or a note stay on their line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t', '\v', '\f':
			return ' '
		}
		return r
	}, s)
}

// codeSpan writes s as a Markdown code span whose fence is longer than
// any run of backticks in s (padded with a space when s starts or ends
// with one), on one line.
func codeSpan(s string) string {
	s = oneLine(s)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Sides names what was compared: "a.json (baseline, 5 repeats) → b.json
// (single run)".
func (r *Report) Sides() string {
	return fmt.Sprintf("%s (baseline, %s) → %s (%s)", r.A, runs(r.RepeatsA), r.B, runs(r.RepeatsB))
}

func runs(n int) string {
	if n <= 1 {
		return "single run"
	}
	return fmt.Sprintf("%d repeats", n)
}

// Tally says how many comparisons were made and what chance alone would
// do to those the rank test judged.
func (r *Report) Tally() string {
	var steps, scenarios, figures, ranked int
	for _, c := range r.Changes {
		if c.Control {
			continue
		}
		switch {
		case c.Metric == Metrics[0] && c.Scenario == "":
			steps++
		case c.Metric == Metrics[0]:
			scenarios++
		case slices.Contains(StepMetrics, c.Metric):
			figures++
		}
		if c.Test == TestRank {
			ranked++
		}
	}
	of := plural(steps, "step")
	if scenarios > 0 {
		of = "(" + of + " + " + plural(scenarios, "scenario") + ")"
	}
	s := fmt.Sprintf("%s (%d metrics × %s", plural(r.Comparisons, "comparison"), len(Metrics), of)
	if figures > 0 {
		s += fmt.Sprintf(" + %d of the steps' deliveries and target", figures)
	}
	s += ")"
	if ranked > 0 {
		s += fmt.Sprintf("; by chance alone about %.1f of them would pass the rank test at α = %v, so each must also move at least %s %%",
			float64(ranked)*Alpha, Alpha, num(r.MinEffectPct))
	}
	return s
}

// Headline is the verdict with its reason: "worse: 3 significant
// changes, 3 worse, 0 better", "unknown: no noise estimate (use --repeat)".
func (r *Report) Headline() string {
	var worse, better int
	for _, c := range r.Changes {
		if c.Significant && !c.Control {
			if c.Direction == Worse {
				worse++
			} else {
				better++
			}
		}
	}
	switch {
	case r.HostBusy:
		return "unknown: host busy: " + r.Why + "; " + r.suppressedText()
	case r.TailOnly:
		return "unknown: " + r.Why + "; " + r.suppressedText()
	case r.Verdict == Unknown && r.Comparisons == 0:
		return "unknown: nothing to compare"
	case r.Verdict == Unknown:
		return "unknown: no noise estimate (use --repeat)"
	case r.Verdict == Same:
		return "same: no significant change"
	}
	return fmt.Sprintf("%s: %s, %d worse, %d better", r.Verdict, plural(worse+better, "significant change"), worse, better)
}

// suppressedText lists the changes the busy host kept from counting,
// worse first: "regression signal suppressed: 1 (40/s) api p50 +15.2 %
// p=0.0079, …" (at most three, then how many more).
func (r *Report) suppressedText() string {
	var worse, better []string
	for i := range r.Changes {
		c := &r.Changes[i]
		if !c.Suppressed {
			continue
		}
		item := fmt.Sprintf("%s%s %s", levelOf(c), scenarioText(c), deltaText(c))
		if c.Test == TestRank {
			item += " " + noiseText(c)
		}
		if c.Direction == Worse {
			worse = append(worse, item)
		} else {
			better = append(better, item)
		}
	}
	list := func(items []string) string {
		if len(items) > 3 {
			return strings.Join(items[:3], ", ") + fmt.Sprintf(" and %d more", len(items)-3)
		}
		return strings.Join(items, ", ")
	}
	switch {
	case len(worse) > 0:
		return "regression signal suppressed: " + list(worse)
	case len(better) > 0:
		return "improvement suppressed: " + list(better)
	}
	return "no change would have been significant either"
}

// Columns head the table of changes; Cells are a change's, in this order.
var Columns = []string{"step", "scenario", "metric", "A", "B", "Δ", "noise", "change"}

// Cells are the change as the tables show it, under Columns: its step,
// scenario ("(all)" for the whole step), metric, A and B with their unit,
// the delta, the noise (p-value or CoVs) and what changed ("worse",
// "better", "worse, suppressed" (the control moved), "control", "control
// moved", "crossed p99:+10%"; empty for nothing).
func (c *Change) Cells() []string {
	return []string{levelOf(c), orAll(c.Scenario), c.Metric, value(c.Metric, c.A), value(c.Metric, c.B), deltaText(c), noiseText(c), changeText(c)}
}

// levelOf names a change's step as the tables do: numbered from 1, with
// its level, after the scenario it ran alone (--each): "2 (landing · 2
// users)".
func levelOf(c *Change) string {
	l := fmt.Sprintf("%s/s", num(c.TargetRate))
	if c.VUs > 0 {
		l = fmt.Sprintf("%d users", c.VUs)
	}
	if c.StepScenario != "" {
		l = c.StepScenario + " · " + l
	}
	if c.Step != c.StepB {
		return fmt.Sprintf("%s (A %d, B %d)", l, c.Step+1, c.StepB+1)
	}
	return fmt.Sprintf("%d (%s)", c.Step+1, l)
}

func orAll(scenario string) string {
	if scenario == "" {
		return "(all)"
	}
	return scenario
}

func scenarioText(c *Change) string {
	if c.Scenario == "" {
		return " " + c.Metric
	}
	return fmt.Sprintf(" %q %s", c.Scenario, c.Metric)
}

// value formats a metric's figure with its unit.
func value(metric string, v float64) string {
	switch metric {
	case results.MetricThroughput, results.MetricAchieved:
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	case results.MetricErrorRate, MetricDelivered:
		return strconv.FormatFloat(100*v, 'f', 2, 64) + " %"
	case MetricTargetCPU:
		return strconv.FormatFloat(v, 'f', 1, 64) + " %"
	case MetricTargetRSS:
		return strconv.FormatFloat(v, 'f', 1, 64) + " MB"
	}
	return results.Millis(v)
}

func deltaText(c *Change) string {
	if c.DeltaPct == nil {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f %%", *c.DeltaPct)
}

func noiseText(c *Change) string {
	switch c.Test {
	case TestRank:
		return "p=" + strconv.FormatFloat(*c.PValue, 'g', 2, 64)
	case TestCoV:
		return fmt.Sprintf("CoV %.1f/%.1f %%", c.CoVA, c.CoVB)
	}
	return "–"
}

func changeText(c *Change) string {
	var parts []string
	switch {
	case c.Significant:
		parts = append(parts, c.Direction)
	case c.Suppressed:
		parts = append(parts, c.Direction+", suppressed")
	case c.Moved:
		parts = append(parts, "control moved")
	case c.Control:
		parts = append(parts, "control")
	}
	if c.Threshold != "" {
		parts = append(parts, "crossed "+c.Threshold)
	}
	return strings.Join(parts, ", ")
}

// num formats a number without needless decimals.
func num(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
