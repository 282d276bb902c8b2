package plan

import (
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

// TestMarshalRoundTrip checks that a plan built from flags can be written
// as YAML and read back unchanged, as `ceiling k8s` needs.
func TestMarshalRoundTrip(t *testing.T) {
	p := flagPlan()
	p.Load.Warmup = durp(0)
	p.HTTP.Headers = map[string]string{"User-Agent": "ceiling"}
	p.SLO = "p99<200ms"
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
