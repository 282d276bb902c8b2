package plan

import (
	"strings"
	"testing"
)

// A one-step plan is "1 step", not "1 steps".
func TestDescribeOneStep(t *testing.T) {
	p, err := Parse("p.yaml", []byte("target: http://127.0.0.1:9\nload: {rates: [10], step: 2s}\nscenarios: [{request: {url: /}}]\n"))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Describe(); !strings.Contains(got, "1 step at [10]/s") {
		t.Errorf("Describe() = %q, want \"1 step at [10]/s\"", got)
	}
}
