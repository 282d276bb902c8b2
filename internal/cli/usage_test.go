package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpSections splits a command's --help into its flag sections: the
// heading ("Load flags:") and the names of the flags listed under it, in
// order.
func helpSections(t *testing.T, args ...string) ([]string, map[string][]string) {
	t.Helper()
	code, stdout, stderr := ceiling(t, context.Background(), append(args, "--help")...)
	if code != ExitOK {
		t.Fatalf("%v --help: exit %d, stderr %q", args, code, stderr)
	}
	name := regexp.MustCompile(`^\s+(?:-\w, )?--([\w-]+)`)
	var order []string
	sections := map[string][]string{}
	heading := ""
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasSuffix(line, "lags:") && !strings.HasPrefix(line, " "):
			heading = line
			order = append(order, heading)
		case line == "":
			heading = ""
		case heading != "":
			if m := name.FindStringSubmatch(line); m != nil {
				sections[heading] = append(sections[heading], m[1])
			}
		}
	}
	return order, sections
}

// run, find and sweep list their flags by group, each group under its
// heading in a fixed order, the flags of a group in the order of their
// meaning; no flag is left ungrouped (the last "Flags:" holds --help
// alone). They were one alphabetical list of 40 to 60 flags, the agents'
// among the basics.
func TestHelpGroups(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd      string
		headings []string
		in       map[string][]string // heading: flags in it, in this order
	}{
		{"run", []string{"Target flags:", "Load flags:", "SLO flags:", "Monitoring flags:", "Output flags:", "Agent flags:", "Flags:"},
			map[string][]string{
				"Target flags:": {"url", "method", "header", "body"},
				"Load flags:":   {"rate", "vus", "step", "warmup", "each"},
				"SLO flags:":    {"slo"},
				"Output flags:": {"out", "md", "html", "junit"},
				"Agent flags:":  {"agents", "token-file", "segment"},
			}},
		{"find", []string{"Target flags:", "Load flags:", "Search flags:", "SLO flags:", "Monitoring flags:", "Output flags:", "Agent flags:", "Flags:"},
			map[string][]string{
				"Search flags:": {"start", "max", "precision"},
				"Agent flags:":  {"agents", "token-file"},
			}},
		{"sweep", []string{"Shape flags:", "Target flags:", "Load flags:", "Search flags:", "SLO flags:", "Monitoring flags:", "Output flags:", "Agent flags:", "Flags:"},
			map[string][]string{
				"Shape flags:":  {"configs", "launcher", "cmd", "ready"},
				"Search flags:": {"find", "start", "max", "precision"},
				"Output flags:": {"need", "out", "md"},
			}},
	}
	for _, tt := range tests {
		order, sections := helpSections(t, tt.cmd)
		if !slices.Equal(order, tt.headings) {
			t.Errorf("%s --help: headings %q, want %q", tt.cmd, order, tt.headings)
		}
		if got := sections["Flags:"]; !slices.Equal(got, []string{"help"}) {
			t.Errorf("%s --help: ungrouped flags %q, want only help", tt.cmd, got)
		}
		for heading, want := range tt.in {
			got := sections[heading]
			var pos []int
			for _, f := range want {
				pos = append(pos, slices.Index(got, f))
			}
			if slices.Contains(pos, -1) || !slices.IsSorted(pos) {
				t.Errorf("%s --help: %s lists %q, want %q among them in this order", tt.cmd, heading, got, want)
			}
		}
	}
	// A command without groups keeps cobra's one list.
	order, sections := helpSections(t, "compare")
	if !slices.Equal(order, []string{"Flags:"}) || !slices.Contains(sections["Flags:"], "threshold") {
		t.Errorf("compare --help: headings %q, flags %q; want one Flags: list", order, sections["Flags:"])
	}
}

// --each runs the stairs once per scenario alone, which only run does:
// find searches one mix and a sweep row is a shape's last step. find and
// sweep do not list it, and refuse it as bad input (find used to list it,
// accept it, and fail only after starting the run).
func TestEachIsRunOnly(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"find", "sweep"} {
		_, sections := helpSections(t, cmd)
		for heading, flags := range sections {
			if slices.Contains(flags, "each") {
				t.Errorf("%s --help lists --each under %s", cmd, heading)
			}
		}
		code, _, stderr := ceiling(t, context.Background(), cmd, "--url", "http://127.0.0.1:9/", "--each")
		if code != ExitBadInput || !strings.Contains(stderr, "unknown flag: --each") {
			t.Errorf("%s --each: exit %d, stderr %q; want 2, unknown flag", cmd, code, stderr)
		}
	}
	if _, sections := helpSections(t, "run"); !slices.Contains(sections["Load flags:"], "each") {
		t.Errorf("run --help: Load flags %q, want --each among them", sections["Load flags:"])
	}
}

// ceiling --help lists demo-target, which the README and the example plans
// start (it was hidden).
func TestDemoTargetListed(t *testing.T) {
	t.Parallel()
	code, stdout, _ := ceiling(t, context.Background(), "--help")
	if code != ExitOK || !regexp.MustCompile(`(?m)^  demo-target +Serve the built-in demo target`).MatchString(stdout) {
		t.Errorf("ceiling --help: exit %d, want demo-target among the commands:\n%s", code, stdout)
	}
}

// The step table fits the terminal's width when one is known ($COLUMNS
// here; a terminal's own width when stdout is one): it leaves out columns
// and says which; --wide prints every column; with no width known (a pipe,
// a file) the table is whole. It was always whole, 170 to 200 columns
// wide with a watched target and deliveries.
func TestTableFitsColumns(t *testing.T) {
	srv := delayServer(t, 0)
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "0s", "--quiet", "--out", out); code != ExitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, stderr)
	}
	head := func(stdout string) []string { return strings.Fields(strings.SplitN(stdout, "\n", 2)[0]) }
	_, whole, _ := ceiling(t, context.Background(), "report", out)
	if strings.Contains(whole, "fitted to") || !slices.Contains(head(whole), "max") {
		t.Fatalf("report without a width: want the whole table:\n%s", whole)
	}
	t.Setenv("COLUMNS", "60")
	_, narrow, _ := ceiling(t, context.Background(), "report", out)
	// Every line fitting is report's TestTextWidthFits; here, that
	// $COLUMNS reaches it.
	if slices.Contains(head(narrow), "max") || !strings.Contains(narrow, "(fitted to 60 columns: left out ") {
		t.Errorf("report with COLUMNS=60: want max left out and said so:\n%s", narrow)
	}
	if _, all, _ := ceiling(t, context.Background(), "report", out, "--wide"); all != whole {
		t.Errorf("report --wide with COLUMNS=60:\n%s\nwant the whole table:\n%s", all, whole)
	}
	if code, stdout, _ := ceiling(t, context.Background(), "run", "--url", srv.URL, "--rate", "20", "--step", "300ms", "--warmup", "0s", "--quiet", "--out", out); code != ExitOK || slices.Contains(head(stdout), "max") || !strings.Contains(stdout, "fitted to 60 columns") {
		t.Errorf("run with COLUMNS=60: exit %d; want the table fitted:\n%s", code, stdout)
	}
}

// Every command that prints the step table takes --wide, which its note
// under a fitted table names.
func TestWideWhereTheTableIs(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"run", "find", "merge", "demo", "k8s", "report"} {
		_, sections := helpSections(t, cmd)
		found := false
		for _, flags := range sections {
			found = found || slices.Contains(flags, "wide")
		}
		if !found {
			t.Errorf("%s --help does not list --wide", cmd)
		}
	}
}
