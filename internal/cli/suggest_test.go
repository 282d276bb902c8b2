package cli

import (
	"context"
	"regexp"
	"slices"
	"testing"
)

// An unknown flag is bad input (exit 2) whose message suggests what was
// meant: a flag of the command another tool names so (--rps, -R, -c,
// --duration), one a typo away or that the name starts, or the commands
// that take it. It used to say only "unknown flag: --rps".
func TestUnknownFlagSuggestions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string // the flags suggested, in order; nil: none
		not  string   // a command the message says takes the flag
	}{
		{[]string{"run", "--rps", "50"}, []string{"rate"}, ""},
		{[]string{"run", "-R", "50"}, []string{"rate"}, ""},
		{[]string{"run", "-rate=50"}, []string{"rate"}, ""},
		{[]string{"find", "--qps", "50"}, []string{"rate"}, ""},
		{[]string{"run", "--duration", "30s"}, []string{"step"}, ""},
		{[]string{"run", "-d", "30s"}, []string{"step"}, ""},
		{[]string{"run", "--connections", "10"}, []string{"vus"}, ""},
		{[]string{"run", "-c", "10"}, []string{"vus"}, ""},
		{[]string{"run", "-H", "X-A: 1"}, []string{"header"}, ""},
		{[]string{"run", "-k"}, []string{"insecure"}, ""},
		{[]string{"run", "--thresholds", "p99<1s"}, []string{"slo"}, ""},
		{[]string{"run", "--rat", "50"}, []string{"rate"}, ""},
		{[]string{"run", "--warmpu", "1s"}, []string{"warmup"}, ""},
		{[]string{"run", "--rtae", "50"}, []string{"rate"}, ""},
		{[]string{"find", "--prec", "5%"}, []string{"precision"}, ""},
		{[]string{"compare", "a.json", "b.json", "--treshold", "p99:+5%"}, []string{"threshold"}, ""},
		{[]string{"demo", "--quik"}, []string{"quick"}, ""},
		{[]string{"find", "--each"}, nil, "ceiling run"},
		{[]string{"validate", "--rate", "5"}, nil, "ceiling find, ceiling run, ceiling soak, ceiling sweep"},
		{[]string{"run", "-x"}, nil, ""},
		{[]string{"run", "--zzzz"}, nil, ""},
	}
	suggested := regexp.MustCompile(`(?m)^\t--([\w-]+)  `)
	for _, tt := range tests {
		code, stdout, stderr := ceiling(t, context.Background(), tt.args...)
		if code != ExitBadInput || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, stdout)
			continue
		}
		var got []string
		for _, m := range suggested.FindAllStringSubmatch(stderr, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q suggests %q, want %q; stderr:\n%s", tt.args, got, tt.want, stderr)
		}
		if tt.want != nil && !regexp.MustCompile(`Did you mean this\?\n`).MatchString(stderr) {
			t.Errorf("%q: stderr %q, want the suggestions under \"Did you mean this?\"", tt.args, stderr)
		}
		if tt.not != "" && !regexp.MustCompile(regexp.QuoteMeta(" is a flag of "+tt.not+", not of ")).MatchString(stderr) {
			t.Errorf("%q: stderr %q, want it to say the flag is %s's", tt.args, stderr, tt.not)
		}
		if !regexp.MustCompile(`See 'ceiling [a-z]+ --help'\.\n$`).MatchString(stderr) {
			t.Errorf("%q: stderr %q, want it to end with where the help is", tt.args, stderr)
		}
	}
}
