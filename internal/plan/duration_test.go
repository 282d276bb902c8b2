package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDurationYAML(t *testing.T) {
	tests := []struct {
		name, in string
		want     time.Duration
		wantErr  bool
	}{
		{"plain", "d: 250ms", 250 * time.Millisecond, false},
		{"quoted", `d: "1m30s"`, 90 * time.Second, false},
		{"tagged", "d: !!str 2s", 2 * time.Second, false},
		{"negative is for Validate", "d: -1s", -time.Second, false},
		{"bare number", "d: 60", 0, true},
		{"garbage", "d: soon", 0, true},
		{"list", "d: [1s]", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct {
				D Duration `yaml:"d"`
			}
			err := yaml.Unmarshal([]byte(tt.in), &v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && v.D.Duration != tt.want {
				t.Errorf("Unmarshal(%q) = %v, want %v", tt.in, v.D.Duration, tt.want)
			}
		})
	}
}

func TestPercentYAML(t *testing.T) {
	tests := []struct {
		name, in string
		want     float64
		wantErr  bool
	}{
		{"plain", "p: 1%", 1, false},
		{"fraction", "p: 0.5%", 0.5, false},
		{"no leading digit", "p: .5%", 0.5, false},
		{"quoted with spaces", `p: " 95 % "`, 95, false},
		{"tagged", "p: !!str 10%", 10, false},
		{"zero", "p: 0%", 0, false},
		{"all", "p: 100%", 100, false},
		{"bare number", "p: 1", 0, true},
		{"bare fraction", "p: 0.01", 0, true},
		{"quoted number", `p: "1"`, 0, true},
		{"above 100%", "p: 100.1%", 0, true},
		{"negative", "p: -1%", 0, true},
		{"not a number", "p: nan%", 0, true},
		{"infinite", "p: inf%", 0, true},
		{"only the sign", "p: '%'", 0, true},
		{"two signs", "p: 1%%", 0, true},
		{"list", "p: [1%]", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct {
				P Percent `yaml:"p"`
			}
			err := yaml.Unmarshal([]byte(tt.in), &v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), errNotPercent.Error()) {
				t.Errorf("Unmarshal(%q) error = %v, want %q", tt.in, err, errNotPercent)
			}
			if !tt.wantErr && v.P.Value != tt.want {
				t.Errorf("Unmarshal(%q) = %v, want %v", tt.in, v.P.Value, tt.want)
			}
		})
	}
}

func TestPercentMarshal(t *testing.T) {
	for _, v := range []float64{0, 0.5, 1, 95, 100, 1e-7, 33.333333333333336} {
		out, err := Percent{v}.MarshalYAML()
		if err != nil {
			t.Fatalf("Percent{%v}.MarshalYAML() = %v", v, err)
		}
		var back struct {
			P Percent `yaml:"p"`
		}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf("p: %q", out)), &back); err != nil || back.P.Value != v {
			t.Errorf("Percent{%v} marshals to %q, which reads back as %v (%v), want %v", v, out, back.P.Value, err, v)
		}
	}
}

// TestMarshalRoundTrip checks that a plan built from flags can be written
// as YAML and read back unchanged, as `ceiling k8s` needs.
func TestMarshalRoundTrip(t *testing.T) {
	p := flagPlan()
	p.Load.Warmup = durp(0)
	p.HTTP.Headers = map[string]string{"User-Agent": "ceiling"}
	p.SLO = "p99<200ms"
	p.Verdict = Verdict{OverloadedP95: dur(time.Second), MaxErrors: &Percent{0.5}}
	p.Strict = boolp(true)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatalf("Marshal() = %v", err)
	}
	got, err := Parse("", data)
	if err != nil {
		t.Fatalf("Parse(Marshal(p)) = %v, want no error; YAML:\n%s", err, data)
	}
	// Marshal writes nil lists and maps as empty ones, which mean the same.
	if diff := cmp.Diff(p, got, ignorePos, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Parse(Marshal(p)) mismatch (-want +got):\n%s\nYAML:\n%s", diff, data)
	}
}
