package outputs

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardPath is docs/grafana's dashboard, from this package's directory.
const dashboardPath = "../../docs/grafana/ceiling.json"

// grafanaDashboard is the part of a Grafana dashboard's JSON the tests read.
type grafanaDashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Annotations   struct {
		List []grafanaAnnotation `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaTarget struct {
	RefID      string             `json:"refId"`
	Expr       string             `json:"expr"`
	Datasource *grafanaDatasource `json:"datasource"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	GridPos    struct{ X, Y, W, H int }
	Targets    []grafanaTarget `json:"targets"`
	Panels     []grafanaPanel  `json:"panels"` // a collapsed row's panels
}

type grafanaAnnotation struct {
	Name       string             `json:"name"`
	BuiltIn    int                `json:"builtIn"`
	Datasource *grafanaDatasource `json:"datasource"`
	Expr       string             `json:"expr"`
	Target     *grafanaTarget     `json:"target"` // where newer Grafanas keep it
}

// expr is the annotation's PromQL, wherever this Grafana put it.
func (a grafanaAnnotation) expr() string {
	if a.Expr == "" && a.Target != nil {
		return a.Target.Expr
	}
	return a.Expr
}

type grafanaVariable struct {
	Type       string             `json:"type"`
	Name       string             `json:"name"`
	Definition string             `json:"definition"`
	Query      json.RawMessage    `json:"query"` // a string, or {"query": ...}
	Multi      bool               `json:"multi"`
	IncludeAll bool               `json:"includeAll"`
	Datasource *grafanaDatasource `json:"datasource"`
}

// query is the variable's query text, from either form of "query".
func (v grafanaVariable) query(t testing.TB) string {
	t.Helper()
	if len(v.Query) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(v.Query, &o); err != nil {
		t.Fatalf("variable %s: query is neither a string nor an object: %v", v.Name, err)
	}
	return o.Query
}

// loadDashboard reads and parses docs/grafana/ceiling.json.
func loadDashboard(t testing.TB) grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// allPanels is the dashboard's panels with collapsed rows' panels flattened
// in, rows themselves left out.
func allPanels(d grafanaDashboard) []grafanaPanel {
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if p.Type != "row" {
				out = append(out, p)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// dashboardQueries returns every PromQL expression in the dashboard as
// written, Grafana variables ($run_id, $__rate_interval, ...) and all: the
// panels' targets, the annotations, and the query variables' queries
// (label_values(...) included; concreteQuery makes those PromQL too).
// Duplicates are dropped. Pass each through concreteQuery to run it against
// a Prometheus for one run.
func dashboardQueries(t testing.TB) []string {
	t.Helper()
	d := loadDashboard(t)
	var out []string
	add := func(e string) {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	for _, p := range allPanels(d) {
		for _, tg := range p.Targets {
			add(tg.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		add(a.expr())
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			add(v.query(t))
			add(v.Definition)
		}
	}
	return out
}

var (
	grafanaVar       = regexp.MustCompile(`\$(?:\{(\w+)(?::\w+)?\}|(\w+))`)
	labelValuesOf    = regexp.MustCompile(`^label_values\(\s*(.+?)\s*,\s*(\w+)\s*\)$`)
	labelValuesBare  = regexp.MustCompile(`^label_values\(\s*(\w+)\s*\)$`)
	queryResult      = regexp.MustCompile(`^query_result\(\s*(.+?)\s*\)$`)
	promIdentifier   = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	ceilingSelector  = regexp.MustCompile(`(ceiling_[A-Za-z0-9_:]*)\s*(\{[^}]*\})?`)
	promStringEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`)
)

// concreteQuery turns one of dashboardQueries' expressions into plain PromQL
// for the run runID, as Grafana would send it: $run_id and ${run_id} become
// runID (escaped for a double-quoted PromQL string), $__rate_interval and
// $__interval 5s, $__interval_ms 5000, $__range 1h ($__range_s 3600,
// $__range_ms 3600000); a variable's label_values(selector, label) becomes
// group by (label) (selector), which returns the same label values, and
// query_result(q) becomes q. Other variables are left as they are.
func concreteQuery(expr, runID string) string {
	expr = grafanaVar.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVar.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		switch name {
		case "run_id":
			return promStringEscape.Replace(runID)
		case "__rate_interval", "__interval":
			return "5s"
		case "__interval_ms":
			return "5000"
		case "__range":
			return "1h"
		case "__range_s":
			return "3600"
		case "__range_ms":
			return "3600000"
		}
		return m
	})
	expr = strings.TrimSpace(expr)
	if m := labelValuesOf.FindStringSubmatch(expr); m != nil {
		return "group by (" + m[2] + ") (" + m[1] + ")"
	}
	if m := labelValuesBare.FindStringSubmatch(expr); m != nil {
		return "group by (" + m[1] + ") ({" + m[1] + `!=""})`
	}
	if m := queryResult.FindStringSubmatch(expr); m != nil {
		return m[1]
	}
	return expr
}

// ceilingNames lists the ceiling_ identifiers in expr, in order, repeats
// dropped. Identifiers are whole tokens, so foo_ceiling_x is not one.
func ceilingNames(expr string) []string {
	var out []string
	for _, id := range promIdentifier.FindAllString(expr, -1) {
		if strings.HasPrefix(id, "ceiling_") && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// balanced reports whether expr's brackets pair up and its string literals
// end: a cheap guard against a mangled edit, not a PromQL parser.
func balanced(expr string) bool {
	var stack []rune
	var quote rune
	escaped := false
	for _, r := range expr {
		switch {
		case quote != 0:
			if escaped {
				escaped = false
			} else if r == '\\' && quote != '`' {
				escaped = true
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case r == ')' || r == ']' || r == '}':
			open := map[rune]rune{')': '(', ']': '[', '}': '{'}[r]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return quote == 0 && len(stack) == 0
}

func TestDashboardShape(t *testing.T) {
	d := loadDashboard(t)
	if d.UID != "ceiling" {
		t.Errorf("uid = %q, want ceiling", d.UID)
	}
	if d.Title != "ceiling load test" {
		t.Errorf("title = %q, want %q", d.Title, "ceiling load test")
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion = %d, want 36 or later (datasource objects)", d.SchemaVersion)
	}
	t.Run("variables", func(t *testing.T) { checkDashboardVariables(t, d) })
	t.Run("panels", func(t *testing.T) { checkDashboardPanels(t, d) })
	t.Run("annotations", func(t *testing.T) { checkDashboardAnnotations(t, d) })
}

// checkDashboardVariables checks the dashboard's template variables: a
// Prometheus datasource, and one run_id picked from the runs written.
func checkDashboardVariables(t *testing.T, d grafanaDashboard) {
	vars := map[string]grafanaVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds, ok := vars["datasource"]; !ok {
		t.Error("no datasource template variable")
	} else if ds.Type != "datasource" || ds.query(t) != "prometheus" {
		t.Errorf("datasource variable: type %q query %q, want a Prometheus datasource variable", ds.Type, ds.query(t))
	}
	run, ok := vars["run_id"]
	if !ok {
		t.Fatal("no run_id template variable")
	}
	want := "label_values(" + StepIndex + ", run_id)"
	if run.Type != "query" || run.query(t) != want || run.Definition != want {
		t.Errorf("run_id variable: type %q query %q definition %q, want a query variable of %s",
			run.Type, run.query(t), run.Definition, want)
	}
	if run.Multi || run.IncludeAll {
		t.Error("run_id variable allows several runs; the queries match it with =, so it must pick one")
	}
	if run.Datasource == nil || run.Datasource.UID != "${datasource}" {
		t.Errorf("run_id variable's datasource = %+v, want uid ${datasource}", run.Datasource)
	}
}

// checkDashboardPanels checks every panel (unique ids, titles, on the
// grid, reading the chosen datasource) and that one stat panel shows the
// current step.
func checkDashboardPanels(t *testing.T, d grafanaDashboard) {
	ids := map[int]string{}
	var stat bool
	for _, p := range allPanels(d) {
		if prev, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		checkPanel(t, p)
		if p.Type == "stat" && slices.ContainsFunc(p.Targets, func(tg grafanaTarget) bool {
			return slices.Contains(ceilingNames(tg.Expr), StepIndex)
		}) {
			stat = true
		}
	}
	if !stat {
		t.Error("no stat panel of the current step (" + StepIndex + ")")
	}
}

// checkPanel checks one panel: a title, a place on the 24-column grid,
// the chosen datasource, and queries with distinct refIds.
func checkPanel(t *testing.T, p grafanaPanel) {
	t.Helper()
	if p.Title == "" {
		t.Errorf("panel %d has no title", p.ID)
	}
	if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
		t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
	}
	if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
		t.Errorf("panel %q: datasource %+v, want uid ${datasource}", p.Title, p.Datasource)
	}
	if len(p.Targets) == 0 {
		t.Errorf("panel %q has no queries", p.Title)
	}
	refs := map[string]bool{}
	for _, tg := range p.Targets {
		if tg.RefID == "" || refs[tg.RefID] {
			t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
		}
		refs[tg.RefID] = true
		if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q query %s: datasource %+v, want uid ${datasource}", p.Title, tg.RefID, tg.Datasource)
		}
	}
}

// checkDashboardAnnotations checks that every annotation of ours reads
// the chosen datasource, and that one marks the steps.
func checkDashboardAnnotations(t *testing.T, d grafanaDashboard) {
	var steps bool
	for _, a := range d.Annotations.List {
		if a.BuiltIn != 0 {
			continue
		}
		if a.Datasource == nil || a.Datasource.UID != "${datasource}" {
			t.Errorf("annotation %q: datasource %+v, want uid ${datasource}", a.Name, a.Datasource)
		}
		if slices.Contains(ceilingNames(a.expr()), StepIndex) {
			steps = true
		}
	}
	if !steps {
		t.Error("no annotation of the steps from " + StepIndex)
	}
}

// TestDashboardSeries holds the dashboard to series.go: every query reads
// only series ceiling writes, each for the chosen run, and every series
// written is shown on some panel.
func TestDashboardSeries(t *testing.T) {
	queries := dashboardQueries(t)
	if len(queries) == 0 {
		t.Fatal("no queries in the dashboard")
	}
	for _, q := range queries {
		names := ceilingNames(q)
		if len(names) == 0 {
			t.Errorf("%s: reads no ceiling_ series", q)
		}
		for _, n := range names {
			if !slices.Contains(SeriesNames, n) {
				t.Errorf("%s: %s is not in SeriesNames", q, n)
			}
		}
		if !balanced(q) {
			t.Errorf("%s: unbalanced brackets or an unclosed string", q)
		}
	}

	// Panels and annotations show one run: every selector of a ceiling
	// series says which. (The run_id variable's own query lists them all.)
	d := loadDashboard(t)
	var scoped []string
	shown := map[string]bool{}
	for _, p := range allPanels(d) {
		for _, tg := range p.Targets {
			scoped = append(scoped, tg.Expr)
			for _, n := range ceilingNames(tg.Expr) {
				shown[n] = true
			}
		}
	}
	for _, a := range d.Annotations.List {
		if e := a.expr(); e != "" {
			scoped = append(scoped, e)
		}
	}
	for _, q := range scoped {
		for _, m := range ceilingSelector.FindAllStringSubmatch(q, -1) {
			if !strings.Contains(m[2], `run_id="$run_id"`) {
				t.Errorf("%s: %s%s is not limited to run_id=\"$run_id\"", q, m[1], m[2])
			}
		}
	}
	// Deliveries and sockets are step totals of plans that have sinks or
	// hold sockets; the report shows them, a panel would be empty for most.
	notShown := []string{StepDeliveryIDs, StepSockets}
	for _, n := range SeriesNames {
		if !shown[n] && !slices.Contains(notShown, n) {
			t.Errorf("%s is written but no panel shows it", n)
		}
	}
}

func TestConcreteQuery(t *testing.T) {
	for _, c := range []struct{ in, run, want string }{
		{`rate(ceiling_late_total{run_id="$run_id"}[$__rate_interval])`, "r1",
			`rate(ceiling_late_total{run_id="r1"}[5s])`},
		{`ceiling_step_index{run_id="${run_id}"}[$__interval] offset ${__interval}`, "r1",
			`ceiling_step_index{run_id="r1"}[5s] offset 5s`},
		{`last_over_time(ceiling_step_index{run_id="$run_id"}[$__range])`, "r1",
			`last_over_time(ceiling_step_index{run_id="r1"}[1h])`},
		{`ceiling_step_index{run_id="$run_id"} * $__interval_ms`, `a"b\c`,
			`ceiling_step_index{run_id="a\"b\\c"} * 5000`},
		{`label_values(ceiling_step_index, run_id)`, "r1", `group by (run_id) (ceiling_step_index)`},
		{`label_values(ceiling_step_index{run_id="$run_id"}, step)`, "r1",
			`group by (step) (ceiling_step_index{run_id="r1"})`},
		{`label_values(run_id)`, "r1", `group by (run_id) ({run_id!=""})`},
		{`query_result(topk(1, ceiling_step_index))`, "r1", `topk(1, ceiling_step_index)`},
		{`ceiling_step_index{step="$other"}`, "r1", `ceiling_step_index{step="$other"}`},
	} {
		if got := concreteQuery(c.in, c.run); got != c.want {
			t.Errorf("concreteQuery(%q, %q) = %q, want %q", c.in, c.run, got, c.want)
		}
	}

	// Every query the dashboard holds comes out as plain PromQL for the run.
	for _, q := range dashboardQueries(t) {
		got := concreteQuery(q, "run-42")
		if strings.Contains(got, "$") || strings.Contains(got, "label_values") {
			t.Errorf("concreteQuery(%q) = %q: a Grafana variable or function is left", q, got)
		}
		if !balanced(got) {
			t.Errorf("concreteQuery(%q) = %q: unbalanced", q, got)
		}
		if strings.Contains(q, "$run_id") && !strings.Contains(got, `run_id="run-42"`) {
			t.Errorf("concreteQuery(%q) = %q: the run is not filled in", q, got)
		}
	}
}

func TestCeilingNames(t *testing.T) {
	got := ceilingNames(`sum(rate(ceiling_requests_total{x="y"}[5s])) / my_ceiling_x + ceiling_requests_total + ceiling_Bogus2`)
	want := []string{"ceiling_requests_total", "ceiling_Bogus2"}
	if !slices.Equal(got, want) {
		t.Errorf("ceilingNames = %q, want %q", got, want)
	}
	for e, ok := range map[string]bool{
		`sum(rate(x{a="}"}[5s]))`: true,
		`sum(rate(x{a="b"}[5s])`:  false,
		`x{a="b}`:                 false,
		`(x]`:                     false,
	} {
		if balanced(e) != ok {
			t.Errorf("balanced(%q) = %v, want %v", e, !ok, ok)
		}
	}
}
