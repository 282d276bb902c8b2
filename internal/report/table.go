package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// columns of the step table, in order; a watched target adds "cpu" and
// "rss" before "slo".
var columns = []string{"step", "target", "achieved", "p50", "p95", "p99", "max", "errors", "limited", "late", "slo", "verdict"}

// columnsOf returns the step table's columns for r.
func columnsOf(r *results.Result) []string {
	out := append([]string{}, columns[:len(columns)-2]...)
	if watched(r) {
		out = append(out, "cpu", "rss")
	}
	if delivered(r) {
		out = append(out, "delivered", "delivery p50/p99")
	}
	if socketed(r) {
		out = append(out, "sockets")
	}
	return append(out, "slo", "verdict")
}

// delivered reports whether any step counted deliveries.
func delivered(r *results.Result) bool {
	for _, s := range r.Steps {
		if s.Delivery != nil {
			return true
		}
	}
	return false
}

// spread is " ±CoV%" of a repeated step's metric (the medians' spread over
// the repeats), or "" without repeats.
func spread(r *results.Repeat, metric string) string {
	if r == nil || r.N < 2 {
		return ""
	}
	return fmt.Sprintf(" ±%.1f%%", r.CoVPct[metric])
}

// socketed reports whether any step held websocket sockets.
func socketed(r *results.Result) bool {
	for _, s := range r.Steps {
		if s.WebSocket != nil {
			return true
		}
	}
	return false
}

// sockets is a step's sockets cell: open at its end (of those wanted) and
// how many dropped during it.
func sockets(s results.Step) string {
	w := s.WebSocket
	if w == nil {
		return "-"
	}
	cell := fmt.Sprint(w.Open)
	if w.Wanted > 0 {
		cell = fmt.Sprintf("%d/%d", w.Open, w.Wanted)
	}
	if w.Dropped > 0 {
		cell += fmt.Sprintf(" (%d dropped)", w.Dropped)
	}
	return cell
}

// watched reports whether any step measured the target's CPU and memory.
func watched(r *results.Result) bool {
	for _, s := range r.Steps {
		if measured(s.Target) {
			return true
		}
	}
	return false
}

// measured reports whether t holds readings of the target's process or
// cgroup (results.Target.Measured).
func measured(t *results.Target) bool { return t.Measured() }

// levelOf is a step's load: its rate, or its users in the closed model.
func levelOf(s results.Step) string {
	if s.Model == "closed" {
		return fmt.Sprintf("%d users", s.VUs)
	}
	return Rate(s.TargetRate)
}

// rows renders each step's cells.
func rows(r *results.Result) [][]string {
	out := make([][]string, 0, len(r.Steps))
	for _, s := range r.Steps {
		row := stepCells(s)
		if watched(r) {
			row = append(row, targetCells(s)...)
		}
		if delivered(r) {
			row = append(row, deliveryCells(s)...)
		}
		if socketed(r) {
			row = append(row, sockets(s))
		}
		out = append(out, append(row, sloCell(s), verdict(s)))
		if l := s.Logins; l != nil && (l.Count > 0 || l.Skipped > 0 || l.NotLoggedIn > 0 || l.LoggedInEarlier > 0) {
			out = append(out, loginRow(l, len(row)+2))
		}
	}
	return out
}

// stepCells are the cells every step has, from "step" to "late".
func stepCells(s results.Step) []string {
	target := levelOf(s)
	if s.Scenario != "" { // load.each: the scenario ran alone
		target = s.Scenario + " · " + target
	}
	late := fmt.Sprint(s.Late)
	if s.Late > 0 {
		late = fmt.Sprintf("%d (max %s)", s.Late, Millis(s.MaxLagMS))
	}
	index := fmt.Sprint(s.Index + 1)
	if s.Interrupted {
		index += " (partial)"
	}
	achieved := Rate(s.AchievedRate) + spread(s.Repeat, results.MetricAchieved)
	if s.Sent == 0 && s.Completed == 0 && s.Model != "closed" {
		achieved = "-" // nothing sent (an idle soak): no rate was achieved, not 0/s of one asked for
	}
	errs, limited := shareCells(s)
	return append(append([]string{index, target, achieved}, latencyCells(s)...), errs, limited, late)
}

// latencyCells are a step's p50, p95, p99 and max, each with its spread
// over the repeats; "-" when nothing completed: no latency, not a zero one.
func latencyCells(s results.Step) []string {
	if s.Completed == 0 {
		return []string{"-", "-", "-", "-"}
	}
	return []string{
		Millis(s.LatencyMS.P50) + spread(s.Repeat, results.MetricP50),
		Millis(s.LatencyMS.P95) + spread(s.Repeat, results.MetricP95),
		Millis(s.LatencyMS.P99) + spread(s.Repeat, results.MetricP99),
		Millis(s.LatencyMS.Max),
	}
}

// shareCells are a step's errors (with its commonest classes) and the
// share of its requests the target limited; "-" when nothing completed:
// shares of nothing.
func shareCells(s results.Step) (errs, limited string) {
	if s.Completed == 0 {
		return "-", "-"
	}
	errs = Percent(s.ErrorRate)
	if s.Failed > 0 {
		errs = fmt.Sprintf("%s (%s)", errs, topErrors(s.Errors))
	}
	limited = "0%"
	if s.Limited > 0 {
		limited = Percent(float64(s.Limited) / float64(s.Completed))
	}
	return errs, limited
}

// targetCells are a step's cpu and rss cells: the watched target's
// readings, "-" when the step has none.
func targetCells(s results.Step) []string {
	if t := s.Target; measured(t) {
		return []string{fmt.Sprintf("%.0f%%", t.CPUPct), fmt.Sprintf("%.0f MB", t.RSSMB)}
	}
	return []string{"-", "-"}
}

// deliveryCells are a step's delivered and delivery p50/p99 cells.
func deliveryCells(s results.Step) []string {
	x := s.Delivery
	if x == nil {
		return []string{"-", "-"}
	}
	d := fmt.Sprintf("%d/%d", x.Delivered, x.Expected)
	if x.AtStepEnd != nil && *x.AtStepEnd != x.Delivered {
		// find judged the step on what had arrived by its end
		d = fmt.Sprintf("%d/%d (+%d later)", *x.AtStepEnd, x.Expected, x.Delivered-*x.AtStepEnd)
	}
	lat := "-"
	if x.Expected > 0 {
		lat = deliveryMillis(x, "p50") + " / " + deliveryMillis(x, "p99")
	}
	return []string{d, lat}
}

// sloCell says whether a step passed the SLO: "-" when none was judged.
func sloCell(s results.Step) string {
	if s.SLOPassed == nil {
		return "-"
	}
	if *s.SLOPassed {
		return "pass"
	}
	return "FAIL"
}

// loginRow is the line under a step for its logins, n cells wide: the
// attempts, their latency and failures, and in the verdict's cell what
// the step's verdict does not judge (retries, users without a login,
// arrivals left unrun, users that had logged in during an earlier step).
// A step that made no attempt has no login latency nor errors: "-".
func loginRow(l *results.Logins, n int) []string {
	errs, p50, p95, p99, most := "-", "-", "-", "-", "-"
	if l.Count > 0 {
		errs = Percent(float64(l.Failed) / float64(l.Count))
		p50, p95, p99, most = Millis(l.LatencyMS.P50), Millis(l.LatencyMS.P95), Millis(l.LatencyMS.P99), Millis(l.LatencyMS.Max)
	}
	if l.Failed > 0 {
		errs = fmt.Sprintf("%s (%s)", errs, topErrors(l.ByClass))
	}
	var note []string
	switch {
	case l.Earlier():
		note = append(note, fmt.Sprintf("no new login: its %d users logged in during an earlier step", l.LoggedInEarlier))
	case l.LoggedInEarlier > 0:
		note = append(note, fmt.Sprintf("%d retried", l.Retried), fmt.Sprintf("%d users logged in during an earlier step", l.LoggedInEarlier))
	default:
		note = append(note, fmt.Sprintf("%d retried", l.Retried))
	}
	if l.NotLoggedIn > 0 {
		note = append(note, fmt.Sprintf("%d users not logged in", l.NotLoggedIn))
	}
	if l.Skipped > 0 {
		note = append(note, fmt.Sprintf("%d arrivals unrun", l.Skipped))
	}
	row := []string{"↳ login", fmt.Sprintf("%d logins", l.Count), "-", p50, p95, p99, most, errs}
	for len(row) < n-1 {
		row = append(row, "-")
	}
	return append(row, strings.Join(note, ", "))
}

func ellipsis(more bool) string {
	if more {
		return ", …"
	}
	return ""
}

// verdict is the step's verdict, with its reason when it is not HEALTHY
// (a step in which events happened names them there).
func verdict(s results.Step) string {
	v, why := s.Verdict, s.VerdictReason
	switch {
	case v == "":
		return "-"
	case why == "":
		return v
	}
	return v + " (" + why + ")"
}

// topErrors names the most frequent failure classes: "timeout 12, reset 3".
func topErrors(errs map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var all []kv
	for k, v := range errs {
		all = append(all, kv{k, v})
	}
	for i := 1; i < len(all); i++ { // insertion sort: a handful of classes
		for j := i; j > 0 && (all[j].v > all[j-1].v || all[j].v == all[j-1].v && all[j].k < all[j-1].k); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	parts := make([]string, 0, 2)
	for i, e := range all {
		if i == 2 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}

// Text writes the step table for a terminal, columns aligned, followed by
// what each event cost (when the plan had events), the thresholds and
// warnings, and a run's summary line (Summary). It returns the first error writing to w.
func Text(w io.Writer, r *results.Result) error {
	return TextWidth(w, r, 0)
}

// TextWidth is Text with the step table fitted to a terminal width runes
// wide (0: no limit, every column): it leaves out the columns that say
// least, then wraps the verdict (stepTable.fit), and says what it left
// out. The other tables are as Text writes them.
func TextWidth(w io.Writer, r *results.Result, width int) error {
	c := &checked{w: w}
	text(c, r, width)
	return c.err
}

// checked keeps the first error of the writes to w (a full disk, a closed
// pipe), so that a renderer made of many writes can return it.
type checked struct {
	w   io.Writer
	err error
}

func (c *checked) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.err = err
	return n, err
}

func text(w io.Writer, r *results.Result, width int) {
	t := &stepTable{head: columnsOf(r), rows: rows(r)}
	t.fit(width, judgedColumns(r))
	t.print(w, width)
	eventTable(w, r, EventsTitle+":", textEventTable)
	soakText(w, r)
	breakdownTables(w, r, textTable)
	footer(w, r, "")
	if s := Summary(r); s != "" {
		fmt.Fprintf(w, "\n%s\n", s)
	}
	fmt.Fprintf(w, "\n%s\n", OutcomeLine(r))
}

// footer writes thresholds and warnings; prefix starts each line.
func footer(w io.Writer, r *results.Result, prefix string) {
	if n := r.Repeats(); n > 1 {
		fmt.Fprintf(w, "\n%seach figure is the median of %d repeats (fewer where a repeat was interrupted; counts: their sum; max: the largest); ± is its coefficient of variation over them\n", prefix, n)
	}
	agentLines(w, r, prefix)
	if r.Unfinished {
		fmt.Fprintf(w, "\n%sUNFINISHED: ceiling stopped before the run ended (killed, or a second Ctrl-C); only the steps it had written are shown, and the run did not pass\n", prefix)
	}
	if len(r.Thresholds) > 0 && r.Search == nil { // find: the steps above the edge fail by design
		fmt.Fprintln(w)
		for _, th := range r.Thresholds {
			mark := "ok  "
			if !th.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "%s%s %s (%s)\n", prefix, mark, th.Expr, worst(r, th))
		}
	}
	if len(r.Invalid) > 0 {
		fmt.Fprintln(w)
		for _, msg := range r.Invalid {
			fmt.Fprintf(w, "%sINVALID %s\n", prefix, msg)
		}
	}
	if d := r.Delivery; d != nil {
		fmt.Fprintf(w, "\n%sdelivery: %d of %d accepted ids delivered, %d duplicates, send→delivery p50 %s p99 %s%s; %s\n",
			prefix, d.Delivered, d.Expected, d.Duplicates, deliveryMillis(d, "p50"), deliveryMillis(d, "p99"), censored(d), drained(d))
		if len(d.LostIDs) > 0 {
			fmt.Fprintf(w, "%s%s (first %d): %s\n", prefix, missingIDs(d), len(d.LostIDs), strings.Join(d.LostIDs[:min(len(d.LostIDs), 5)], ", ")+ellipsis(len(d.LostIDs) > 5))
		}
	}
	noted := false
	for _, s := range r.Steps {
		for _, msg := range s.Notes {
			if !noted {
				fmt.Fprintln(w)
				noted = true
			}
			fmt.Fprintf(w, "%sNOTE step %d: %s\n", prefix, s.Index+1, msg)
		}
	}
	warned := false
	for _, s := range r.Steps {
		for _, msg := range s.Warnings {
			if !warned {
				fmt.Fprintln(w)
				warned = true
			}
			fmt.Fprintf(w, "%sWARNING step %d: %s\n", prefix, s.Index+1, msg)
		}
	}
	for _, msg := range r.Warnings {
		if !warned {
			fmt.Fprintln(w)
			warned = true
		}
		fmt.Fprintf(w, "%sWARNING: %s\n", prefix, msg)
	}
}

// worst says where a threshold was furthest from passing: its worst
// step's value, or for a recovery term its worst event's recovery.
func worst(r *results.Result, th results.Threshold) string {
	if ts, err := slo.Parse(th.Expr); err != nil || len(ts) != 1 || !ts[0].OfEvents() {
		return "worst step: " + value(th)
	}
	e, ok := worstEvent(r)
	if !ok {
		return "no event"
	}
	return "worst event: " + e.Name + ", " + recoveryText(e)
}

// value formats a threshold's measured value in its own unit.
func value(th results.Threshold) string {
	expr := th.Expr
	if i := strings.LastIndexByte(expr, '.'); i >= 0 && !strings.ContainsAny(expr[:i], "<>") {
		expr = expr[i+1:]
	}
	metric := expr[:strings.IndexFunc(expr+"<", func(r rune) bool { return strings.ContainsRune("<>=!", r) })]
	if th.AtLeast {
		return "≥ " + TermValue(strings.TrimSpace(metric), th.Value) + ", ids still missing"
	}
	return TermValue(strings.TrimSpace(metric), th.Value)
}

// TermValue writes the value of an SLO term's metric: a share for errors,
// limited and delivered, a fraction of the target for rate, else a
// duration from milliseconds.
func TermValue(metric string, v float64) string {
	switch metric {
	case "errors", "limited", "delivered":
		return fmt.Sprintf("%.2f%%", v)
	case "rate":
		return fmt.Sprintf("%.3f of target", v)
	case "throughput":
		return Rate(v)
	}
	return Millis(v)
}

// deliveryMillis writes a delivery percentile (p50 … p999): "≥ 13.7 s"
// when the ids still missing make it a lower bound.
func deliveryMillis(d *results.Delivery, name string) string {
	v := map[string]float64{"p50": d.LatencyMS.P50, "p90": d.LatencyMS.P90, "p95": d.LatencyMS.P95, "p99": d.LatencyMS.P99, "p999": d.LatencyMS.P999}[name]
	if d.AtLeast(name) {
		return "≥ " + Millis(v)
	}
	return Millis(v)
}

// censored says how the missing ids are counted in the delivery
// percentiles, when some are and any percentile shown is a lower bound.
func censored(d *results.Delivery) string {
	if !d.AtLeast("p50") && !d.AtLeast("p99") {
		return ""
	}
	return fmt.Sprintf(" (the %d missing counted at their wait so far)", d.Missing())
}

// missingIDs names the listed ids: lost when every missing id is proven
// lost, missing otherwise (not arrived, perhaps still queued).
func missingIDs(d *results.Delivery) string {
	if d.Undelivered == 0 && d.Lost > 0 {
		return "lost ids"
	}
	return "missing ids"
}

// drained says how the wait for late deliveries ended: the backlog
// cleared, ids lost (nothing arrived for the drain's last seconds), or ids
// still undelivered when it ran out while deliveries were still coming.
func drained(d *results.Delivery) string {
	switch {
	case d.Lost == 0 && d.Undelivered == 0:
		return fmt.Sprintf("the backlog cleared %.1fs after the load stopped", d.DrainS)
	case d.DrainComplete != nil && !*d.DrainComplete:
		return fmt.Sprintf("%d still missing when the %.1fs drain ended; arrivals were still coming (a longer drain may see them): missing, not proven lost", d.Undelivered, d.DrainS)
	case d.Undelivered > 0:
		return fmt.Sprintf("%d missing, not delivered yet", d.Undelivered)
	}
	return fmt.Sprintf("%d lost: nothing arrived in the last seconds of the %.1fs drain", d.Lost, d.DrainS)
}
