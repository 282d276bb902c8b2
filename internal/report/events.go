package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// EventsTitle heads the table of what each event cost.
const EventsTitle = "What each event cost"

// eventColumns are the columns of the events' table: the figures are its
// window's (from its start until it recovered), "worst" the window's p99
// and max.
var eventColumns = []string{"event", "action", "step", "at", "lasted", "errors", "error rate", "worst p99 / max", "recovery", "outcome"}

// eventRows renders each event's cells; nil without events.
func eventRows(r *results.Result) [][]string {
	var out [][]string
	for _, e := range r.Events {
		row := []string{e.Name, e.Action, fmt.Sprint(e.Step + 1), seconds(e.AtS), seconds(e.DurationS)}
		if w := e.Window; w != nil {
			errs := fmt.Sprint(w.Failed)
			if len(w.Errors) > 0 {
				errs += " (" + topErrors(w.Errors) + ")"
			}
			lat := "-"
			if w.Completed > 0 {
				lat = Millis(w.P99MS) + " / " + Millis(w.MaxMS)
			}
			row = append(row, errs, Percent(w.ErrorRate), lat)
		} else {
			row = append(row, "-", "-", "-")
		}
		out = append(out, append(row, recoveryText(e), outcome(e)))
	}
	return out
}

// seconds writes a time given in seconds ("8.00 s", "250 ms").
func seconds(s float64) string { return Millis(1000 * s) }

// recoveryText is an event's recovery, or why it has none.
func recoveryText(e results.Event) string {
	switch {
	case e.RecoveryS != nil:
		return seconds(*e.RecoveryS)
	case e.Recovery != "":
		return e.Recovery
	}
	return "-"
}

// outcome says how the action ended: a command's exit code and the last
// line of its output, a failed action's error (marked when the plan
// required it), else "done".
func outcome(e results.Event) string {
	failed := e.Error != "" || e.ExitCode != nil && *e.ExitCode != 0
	var parts []string
	if e.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *e.ExitCode))
	}
	if e.Error != "" {
		parts = append(parts, "failed: "+e.Error)
	}
	if len(parts) == 0 {
		parts = append(parts, "done")
	}
	if strings.HasPrefix(e.Handover, results.HandoverNotChecked) {
		parts = append(parts, "overlap not checked")
	}
	out := strings.Join(parts, ", ")
	if line := lastLine(e.Output); failed && line != "" {
		out += ": " + line
	}
	if failed && e.Required {
		out += " (required)"
	}
	return out
}

// lastLine is the last non-blank line of s, cut to 80 characters.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, " \t\r\n"), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}

// eventTable writes the events' table through table (text or Markdown),
// after a blank line and its title; nothing without events.
func eventTable(w io.Writer, r *results.Result, title string, table func(io.Writer, []string, [][]string)) {
	rows := eventRows(r)
	if rows == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n\n", title)
	table(w, eventColumns, rows)
}

// textEventTable is textTable with the last column (the outcome, free
// text) aligned left.
func textEventTable(w io.Writer, head []string, rows [][]string) {
	alignedTable(w, head, rows, true)
}

// mdEventTable is mdTable with the names (event, action) and the outcome
// aligned left.
func mdEventTable(w io.Writer, head []string, rows [][]string) {
	mdAlignedTable(w, head, rows, func(i int) bool { return i < 2 || i == len(head)-1 })
}

// eventMarks are the run's events as marks on a plot over time: a line
// at each start, labelled with its name, and its span shaded until its
// end.
func eventMarks(r *results.Result) []mark {
	var out []mark
	for _, e := range r.Events {
		tip := fmt.Sprintf("%s (%s) at %s for %s", e.Name, e.Action, clock(e.StartS), seconds(e.DurationS))
		if e.RecoveryS != nil {
			tip += fmt.Sprintf("; recovered %s after", seconds(*e.RecoveryS))
		} else if e.Recovery != "" {
			tip += "; " + e.Recovery
		}
		out = append(out, mark{x: e.StartS, until: e.StartS + e.DurationS, label: e.Name, title: tip, event: true})
	}
	return out
}

// worstEvent is the event that recovered last, one that did not recover
// first, among those of steps not cut short (those recovery terms judge);
// false when there is none.
func worstEvent(r *results.Result) (results.Event, bool) {
	cut := map[int]bool{}
	for _, s := range r.Steps {
		cut[s.Index] = s.Interrupted
	}
	var w results.Event
	found := false
	for _, e := range r.Events {
		if interrupted, ok := cut[e.Step]; !ok || interrupted {
			continue
		}
		switch {
		case !found, w.RecoveryS != nil && (e.RecoveryS == nil || *e.RecoveryS > *w.RecoveryS):
			w, found = e, true
		}
	}
	return w, found
}
