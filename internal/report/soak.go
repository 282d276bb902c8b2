package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// SoakTitle heads a soak's section in every report.
const SoakTitle = "What drifted"

// soakColumns head the table of a soak's trends.
var soakColumns = []string{"figure", "median", "line: start → end", "per hour (95% interval)", "R²", "verdict", "projection"}

// SoakHeading says what a soak held, for how long, in what windows.
func SoakHeading(r *results.Result) string {
	k := r.Soak
	if k == nil {
		return ""
	}
	held := fmt.Sprintf("held %s of %s", results.Hours(k.HeldS), results.Hours(k.ForS))
	if k.Stopped != "" {
		held += " (" + k.Stopped + ")"
	}
	windows := fmt.Sprintf("%d windows of %s", k.WindowCount(), results.Hours(k.WindowS))
	if k.Folds > 0 {
		windows += fmt.Sprintf(" (%s windows merged %d times as it grew)", results.Hours(k.BaseWindowS), k.Folds)
	}
	level := ""
	if len(k.Windows) > 0 && k.Windows[0].TargetRate > 0 {
		level = fmt.Sprintf("%g/s ", k.Windows[0].TargetRate)
	} else if len(r.Steps) > 0 && r.Steps[0].VUs > 0 {
		level = fmt.Sprintf("%d users ", r.Steps[0].VUs)
	}
	return fmt.Sprintf("Soak: %s%s, in %s; drifts projected to %s from its start", level, held, windows, results.Hours(k.HorizonS))
}

// soakRows are a soak's trends, one row a figure.
func soakRows(k *results.Soak) [][]string {
	var out [][]string
	for _, t := range k.Trends {
		line, rate, r2 := "—", "—", "—"
		if t.Verdict != results.Unknown {
			line = fmt.Sprintf("%s → %s", figure(t.Start, t.Unit), figure(t.End, t.Unit))
			rate, r2 = strings.TrimSuffix(t.Why, fmt.Sprintf(", R² %.2f", t.R2)), fmt.Sprintf("%.2f", t.R2)
		}
		verdict := t.Verdict
		if t.Verdict == results.Unknown {
			verdict += " (" + t.Why + ")"
		}
		out = append(out, []string{t.Name, figure(t.Median, t.Unit), line, rate, r2, verdict, projection(t.Projection, t.Unit)})
	}
	return out
}

// figure writes a value with its unit: "512 MB", "12.5 ms", "0.4%", "480/s", "12".
func figure(v float64, unit string) string {
	n := number(v)
	switch unit {
	case "", "%", "/s":
		return n + unit
	}
	return n + " " + unit
}

// number writes v with three significant digits, whole numbers from 100.
func number(v float64) string {
	if a := math.Abs(v); a >= 100 || a == math.Trunc(a) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// projection says when a drifting figure reaches its limit: "reaches
// 96 MB (its cgroup's memory limit) in about 23 h (19–28 h)", "" when it
// has none.
func projection(p *results.Projection, unit string) string {
	if p == nil {
		return ""
	}
	limit := fmt.Sprintf("%s (%s)", figure(p.Limit.Value, unit), p.Limit.Of)
	verb := "reaches"
	if !p.Limit.Above {
		verb = "falls to"
	}
	if p.Reached {
		return "has reached " + limit
	}
	s := fmt.Sprintf("%s %s in about %s", verb, limit, results.Hours(p.InS))
	if p.EarliestS != nil && p.LatestS != nil {
		s += fmt.Sprintf(" (%s to %s from the start)", results.Hours(*p.EarliestS), results.Hours(*p.LatestS))
	}
	if p.WithinHorizon {
		s += ": within the horizon"
	}
	return s
}

// soakLines are what a soak found beside its trends: the episodes (the
// first of them), the kinds that recur, the SLO in its windows, and its
// notes.
func soakLines(k *results.Soak) []string {
	var out []string
	const shown = 12
	for i, e := range k.Episodes {
		if i == shown {
			out = append(out, fmt.Sprintf("… and %d more episodes (result.json lists them)", len(k.Episodes)-shown+k.EpisodesLeftOut))
			break
		}
		out = append(out, e.Text)
	}
	if len(k.Episodes) <= shown && k.EpisodesLeftOut > 0 {
		out = append(out, fmt.Sprintf("… and %d more episodes, counted only", k.EpisodesLeftOut))
	}
	for _, rc := range k.Recurring {
		out = append(out, fmt.Sprintf("%s recur every %s (± %s), %d times", episodeKind(rc.Kind), results.Hours(rc.PeriodS), results.Hours(rc.JitterS), rc.Count))
	}
	switch {
	case k.SLOWindows == 0:
	case k.SLOBrokenCount == 0:
		out = append(out, fmt.Sprintf("the SLO held in all %d windows", k.SLOWindows))
	default:
		b := k.SLOBroken[0]
		out = append(out, fmt.Sprintf("the SLO broke in %d of %d windows, first at %s (%s)", k.SLOBrokenCount, k.SLOWindows, results.Clock(b.StartS), strings.Join(b.Terms, ", ")))
	}
	return append(out, k.Notes...)
}

// episodeKind names a kind of episode in the plural.
func episodeKind(kind string) string {
	switch kind {
	case results.EpisodeErrors:
		return "error bursts"
	case results.EpisodeSpike:
		return "latency spikes"
	case results.EpisodeRestart:
		return "restarts"
	}
	return kind
}

// soakText writes a soak's section for a terminal.
func soakText(w io.Writer, r *results.Result) {
	k := r.Soak
	if k == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", SoakHeading(r))
	textTable(w, soakColumns, soakRows(k))
	for _, line := range soakLines(k) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// soakMarkdown writes a soak's section in Markdown.
func soakMarkdown(w io.Writer, r *results.Result) {
	k := r.Soak
	if k == nil {
		return
	}
	fmt.Fprintf(w, "\n### %s\n\n%s\n\n", SoakTitle, mdEscape(SoakHeading(r)))
	mdTable(w, soakColumns, soakRows(k))
	for _, line := range soakLines(k) {
		fmt.Fprintf(w, "- %s\n", mdEscape(line))
	}
}

// soakHTML writes a soak's section of the HTML page: its table and what
// it found; its plots are among the page's (soakCharts).
func soakHTML(b *strings.Builder, r *results.Result) {
	k := r.Soak
	if k == nil {
		return
	}
	fmt.Fprintf(b, "<h2>%s</h2>\n<p>%s</p>\n", SoakTitle, html.EscapeString(SoakHeading(r)))
	HTMLTable(b, soakColumns, soakRows(k))
	if lines := soakLines(k); len(lines) > 0 {
		b.WriteString("<ul>\n")
		for _, line := range lines {
			fmt.Fprintf(b, "<li>%s</li>\n", html.EscapeString(line))
		}
		b.WriteString("</ul>\n")
	}
}

// soakCharts plot a soak's figures over time, a point a window: each
// figure with its line, the limit it is projected to and the projection,
// the episodes marked.
func soakCharts(r *results.Result) []captioned {
	k := r.Soak
	if k == nil || len(k.Windows) == 0 {
		return nil
	}
	trends := map[string]results.Trend{}
	for _, t := range k.Trends {
		trends[t.Figure] = t
	}
	marks := episodeMarks(k)
	var out []captioned
	plot := func(caption, yTitle string, yText func(float64) string, figs ...string) {
		c := &chart{xTitle: "time since the soak's start (h:mm:ss); one point a window", xTime: true, xText: clock, yTitle: yTitle, yText: yText, marks: marks}
		for j, fig := range figs {
			t, ok := trends[fig]
			if !ok {
				continue
			}
			c.series = append(c.series, trendSeries(k, t, palette[j*2%len(palette)])...)
		}
		if len(c.series) > 0 {
			out = append(out, captioned{caption, c})
		}
	}
	plot("Latency over the soak (each window's percentiles, their lines dashed)", "response time (ms)", Millis, "p50_ms", "p99_ms")
	plot("Errors over the soak (% of each window's exchanges)", "errors (%)", percentText, "error_rate")
	plot("Throughput over the soak (answers per second)", "per second", perSecondText, "throughput")
	plot("The target's memory over the soak", "MB", mbText, "target.rss_mb", "target.cgroup_mb")
	plot("The target's CPU over the soak (% of one core)", "CPU (%)", percentText, "target.cpu_pct")
	plot("The target's open descriptors and threads over the soak", "count", countText, "target.fds", "target.threads")
	for _, t := range k.Trends {
		if name, ok := strings.CutPrefix(t.Figure, "target.metric:"); ok {
			plot("The target's metric "+name+" over the soak", name, countText, t.Figure)
		}
	}
	plot("ceiling's own memory over the soak (it should stay flat)", "MB", mbText, "ceiling.rss_mb", "ceiling.anon_mb", "ceiling.heap_mb")
	return out
}

func mbText(v float64) string    { return fmt.Sprintf("%g MB", v) }
func countText(v float64) string { return fmt.Sprintf("%g", v) }

// trendSeries draws one figure in color: its windows' values (dots with
// tips), its line (dashed, from the first window to the last, and on to
// its limit when it reaches it within twice the horizon), and that limit
// (dashed red) when the line reaches it so, or when the figure has come
// within two thirds of it: a limit far above the figure would flatten
// its plot.
func trendSeries(k *results.Soak, t results.Trend, color string) []series {
	var pts []xy
	var tips []string
	var first, last float64 = math.NaN(), math.NaN()
	top := 0.0
	for _, w := range k.Windows {
		v, ok := windowValue(&w, t.Figure)
		if !ok {
			pts = append(pts, xy{(w.StartS + w.EndS) / 2, math.NaN()})
			tips = append(tips, "")
			continue
		}
		x := (w.StartS + w.EndS) / 2
		if atEnd(t.Figure) {
			x = w.EndS
		}
		if math.IsNaN(first) {
			first = x
		}
		last, top = x, max(top, v)
		pts = append(pts, xy{x, v})
		tips = append(tips, fmt.Sprintf("%s: %s, %s–%s", t.Name, figure(v, t.Unit), results.Clock(w.StartS), results.Clock(w.EndS)))
	}
	out := []series{{name: t.Name, points: pts, dots: true, tips: tips, color: color}}
	if t.Verdict == results.Unknown || math.IsNaN(first) {
		return out
	}
	line := []xy{{first, t.Start}, {last, t.End}}
	p := t.Projection
	near := p != nil && !p.Reached && p.AtS <= 2*k.HorizonS
	if near {
		line = append(line, xy{p.AtS, p.Limit.Value})
	}
	out = append(out, series{name: t.Name + " line (" + t.Verdict + ")", points: line, dashed: true, color: color})
	if p != nil && (near || p.Reached || top >= p.Limit.Value*2/3) {
		end := last
		if near {
			end = max(last, p.AtS)
		}
		out = append(out, series{name: "limit: " + p.Limit.Of, points: []xy{{first, p.Limit.Value}, {end, p.Limit.Value}}, dashed: true, color: "#d62728"})
	}
	return out
}

// atEnd reports whether a figure is read at its window's end (a gauge's
// last reading) rather than over the window.
func atEnd(fig string) bool {
	switch fig {
	case "target.rss_mb", "target.cgroup_mb", "target.fds", "target.threads", "ceiling.rss_mb", "ceiling.anon_mb", "ceiling.heap_mb":
		return true
	}
	return false
}

// windowValue is a window's value of a figure (results.Trend.Figure).
func windowValue(w *results.SoakWindow, fig string) (float64, bool) {
	get := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	answered := w.Completed > 0
	switch fig {
	case "throughput":
		return w.Throughput, w.Seconds > 0
	case "error_rate":
		return 100 * w.ErrorRate, answered
	case "p50_ms":
		return w.LatencyMS.P50, answered
	case "p99_ms":
		return w.LatencyMS.P99, answered
	case "ceiling.rss_mb":
		if w.Ceiling == nil {
			return 0, false
		}
		return get(w.Ceiling.RSSMB)
	case "ceiling.anon_mb":
		if w.Ceiling == nil {
			return 0, false
		}
		return get(w.Ceiling.AnonMB)
	case "ceiling.heap_mb":
		if w.Ceiling == nil {
			return 0, false
		}
		return w.Ceiling.HeapMB, true
	}
	t := w.Target
	if t == nil {
		return 0, false
	}
	switch fig {
	case "target.cpu_pct":
		return get(t.CPUPct)
	case "target.rss_mb":
		return get(t.RSSMB)
	case "target.cgroup_mb":
		return get(t.CgroupMB)
	case "target.fds":
		return get(t.FDs)
	case "target.threads":
		return get(t.Threads)
	}
	if name, ok := strings.CutPrefix(fig, "target.metric:"); ok {
		v, ok := t.Metrics[name]
		return v, ok
	}
	return 0, false
}

// episodeMarks mark a soak's episodes on its plots: a burst's or a
// spike's span shaded, a restart or the death a line.
func episodeMarks(k *results.Soak) []mark {
	var out []mark
	for i, e := range k.Episodes {
		if i == 40 {
			break // enough to see them; the list says the rest
		}
		label := map[string]string{results.EpisodeErrors: "errors", results.EpisodeSpike: "spike", results.EpisodeRestart: "restart", results.EpisodeDied: "died"}[e.Kind]
		out = append(out, mark{x: e.StartS, until: e.EndS, label: label, title: e.Text, event: true})
	}
	return out
}

// WindowLine says how a soak stands after its last window: the window's
// figures, and the figures DRIFTING so far with their rates.
func WindowLine(r *results.Result) string {
	if r.Soak == nil {
		return ""
	}
	k := r.Soak
	w, err := k.LastWindow()
	switch {
	case err != nil:
		return "window: " + err.Error()
	case w == nil:
		return ""
	}
	line := fmt.Sprintf("window %s–%s: %.4g/s, p50 %s, p99 %s, errors %.2f%%", results.Clock(w.StartS), results.Clock(w.EndS),
		w.Throughput, Millis(w.LatencyMS.P50), Millis(w.LatencyMS.P99), 100*w.ErrorRate)
	if t := w.Target; t != nil && t.RSSMB != nil {
		line += fmt.Sprintf(", target RSS %s", figure(*t.RSSMB, "MB"))
	}
	var drifting []string
	for _, t := range k.Trends {
		if t.Verdict == results.Drifting {
			drifting = append(drifting, fmt.Sprintf("%s %s", t.Name, strings.TrimSuffix(t.Why, fmt.Sprintf(", R² %.2f", t.R2))))
		}
	}
	if len(drifting) > 0 {
		line += "; DRIFTING: " + strings.Join(drifting, "; ")
	}
	return line
}

// SoakAnswer is a soak's answer in a line: what drifted, at what rate,
// and whether it reaches a known limit within the horizon; "" before its
// first line is fitted.
func SoakAnswer(r *results.Result) string {
	k := r.Soak
	var drifting, unknown []string
	reaching := 0
	for _, t := range k.Trends {
		switch t.Verdict {
		case results.Drifting:
			d := t.Name + " " + strings.TrimSuffix(t.Why, fmt.Sprintf(", R² %.2f", t.R2))
			if p := t.Projection; p != nil {
				d += " (" + projection(p, t.Unit) + ")"
				if p.WithinHorizon {
					reaching++
				}
			}
			drifting = append(drifting, d)
		case results.Unknown:
			unknown = append(unknown, t.Name)
		}
	}
	over := "over " + results.Hours(k.HeldS)
	switch {
	case len(k.Trends) == 0:
		return ""
	case len(drifting) == 0 && len(unknown) == len(k.Trends):
		return fmt.Sprintf("soak: %d windows %s, too few to fit a line (%d needed)", k.WindowCount(), over, 5)
	case len(drifting) == 0:
		return fmt.Sprintf("soak: nothing drifted %s, every figure measured is STABLE", over)
	}
	limit := fmt.Sprintf("none reaches a known limit within the horizon (%s)", results.Hours(k.HorizonS))
	if reaching > 0 {
		limit = fmt.Sprintf("%d reach a known limit within the horizon (%s)", reaching, results.Hours(k.HorizonS))
	}
	return fmt.Sprintf("soak: %d DRIFTING %s: %s; %s", len(drifting), over, strings.Join(drifting, "; "), limit)
}
