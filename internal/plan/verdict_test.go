package plan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// defaultVerdict is the Verdict that Validate fills in when a plan sets none.
func defaultVerdict() Verdict {
	return Verdict{
		HealthyP95: dur(DefaultHealthyP95), OverloadedP95: dur(DefaultOverloadedP95),
		MaxErrors: &Percent{DefaultMaxErrors}, MinRate: &Percent{DefaultMinRate},
	}
}

func boolp(b bool) *bool { return &b }

// withLoad is a valid open plan with rates [10], to which verdict cases add.
const withLoad = minimal + "load: {rates: [10]}\n"

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		verdict func(v *Verdict)
		strict  *bool
	}{
		{"absent: the defaults", withLoad, func(v *Verdict) {}, nil},
		{"null", withLoad + "verdict: null\nstrict: null\n", func(v *Verdict) {}, nil},
		{"empty", withLoad + "verdict: {}\n", func(v *Verdict) {}, nil},
		{"every key", withLoad + "verdict: {healthy_p95: 50ms, overloaded_p95: 2s, max_errors: 0.5%, min_rate: 90%}\n",
			func(v *Verdict) {
				v.HealthyP95, v.OverloadedP95 = dur(50*time.Millisecond), dur(2*time.Second)
				v.MaxErrors, v.MinRate = &Percent{0.5}, &Percent{90}
			}, nil},
		{"the defaults, written out", withLoad + "verdict: {healthy_p95: 100ms, overloaded_p95: 500ms, max_errors: 1%}\n",
			func(v *Verdict) {}, nil},
		{"block style, quoted", withLoad + "verdict:\n  max_errors: \"5 %\"\n  min_rate: '.5%'\n", func(v *Verdict) {
			v.MaxErrors, v.MinRate = &Percent{5}, &Percent{0.5}
		}, nil},
		{"one key, the others default", withLoad + "verdict: {overloaded_p95: 1s}\n", func(v *Verdict) {
			v.OverloadedP95 = dur(time.Second)
		}, nil},
		{"equal p95s", withLoad + "verdict: {healthy_p95: 200ms, overloaded_p95: 200ms}\n", func(v *Verdict) {
			v.HealthyP95, v.OverloadedP95 = dur(200*time.Millisecond), dur(200*time.Millisecond)
		}, nil},
		{"the ends of the range", withLoad + "verdict: {max_errors: 0%, min_rate: 100%}\n", func(v *Verdict) {
			v.MaxErrors, v.MinRate = &Percent{0}, &Percent{100}
		}, nil},
		{"strict", withLoad + "strict: true\n", func(v *Verdict) {}, boolp(true)},
		{"not strict", withLoad + "strict: false\n", func(v *Verdict) {}, boolp(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.yaml, err)
			}
			want := defaultVerdict()
			tt.verdict(&want)
			if diff := cmp.Diff(want, p.Verdict); diff != "" {
				t.Errorf("Parse(%q).Verdict mismatch (-want +got):\n%s", tt.yaml, diff)
			}
			if diff := cmp.Diff(tt.strict, p.Strict); diff != "" {
				t.Errorf("Parse(%q).Strict mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

func TestParseVerdictProblems(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"bare number", withLoad + "verdict: {max_errors: 1}\n", []string{
			`p.yaml:4:23: verdict.max_errors: want a percentage such as "1%"`,
		}},
		{"bare fraction", withLoad + "verdict: {min_rate: 0.95}\n", []string{
			`p.yaml:4:21: verdict.min_rate: want a percentage such as "1%"`,
		}},
		{"above 100%", withLoad + "verdict: {max_errors: 150%}\n", []string{
			`p.yaml:4:23: verdict.max_errors: want a percentage such as "1%"`,
		}},
		{"negative", withLoad + "verdict: {min_rate: -5%}\n", []string{
			`p.yaml:4:21: verdict.min_rate: want a percentage such as "1%"`,
		}},
		{"words", withLoad + "verdict: {max_errors: one percent}\n", []string{
			`p.yaml:4:23: verdict.max_errors: want a percentage such as "1%"`,
		}},
		{"mapping for a percentage", withLoad + "verdict: {max_errors: {value: 1}}\n", []string{
			`p.yaml:4:23: verdict.max_errors: want a percentage such as "1%", not a mapping`,
		}},
		{"bare number for a p95", withLoad + "verdict: {healthy_p95: 100}\n", []string{
			`p.yaml:4:24: verdict.healthy_p95: want a duration such as "60s"`,
		}},
		{"negative p95", withLoad + "verdict: {healthy_p95: -1s}\n", []string{
			`p.yaml:4:24: verdict.healthy_p95: want a positive duration such as "100ms", not -1s`,
		}},
		{"healthy above overloaded", withLoad + "verdict: {healthy_p95: 1s, overloaded_p95: 500ms}\n", []string{
			`p.yaml:4:44: verdict.overloaded_p95: healthy_p95 (1s) is above overloaded_p95 (500ms): want healthy_p95 ≤ overloaded_p95`,
		}},
		{"healthy above the default overloaded", withLoad + "verdict: {healthy_p95: 1s}\n", []string{
			`p.yaml:4:24: verdict.healthy_p95: healthy_p95 (1s) is above overloaded_p95 (500ms): want healthy_p95 ≤ overloaded_p95`,
		}},
		{"overloaded below the default healthy", withLoad + "verdict: {overloaded_p95: 50ms}\n", []string{
			`p.yaml:4:27: verdict.overloaded_p95: healthy_p95 (100ms) is above overloaded_p95 (50ms): want healthy_p95 ≤ overloaded_p95`,
		}},
		{"typo", withLoad + "verdict: {max_error: 1%}\n", []string{
			`p.yaml:4:11: verdict.max_error: unknown key "max_error" (did you mean "max_errors"?)`,
		}},
		{"string for verdict", withLoad + "verdict: strict\n", []string{
			`p.yaml:4:10: verdict: want a mapping of keys such as healthy_p95, overloaded_p95, max_errors, not the string "strict"`,
		}},
		{"yes is not strict", withLoad + "strict: yes\n", []string{
			`p.yaml:4:9: strict: want true or false, not the string "yes"`,
		}},
		{"1 is not strict", withLoad + "strict: 1\n", []string{
			`p.yaml:4:9: strict: want true or false, not the number 1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse(%q) = nil error, want %q", tt.yaml, tt.want)
			}
			if diff := cmp.Diff(tt.want, problemsOf(t, err)); diff != "" {
				t.Errorf("Parse(%q) problems mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}
