package run

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
)

// The closed model has no target rate: an SLO that compares the achieved
// rate with one (rate>=) is bad input naming where it is, pointing to the
// absolute throughput>= (it passed with "worst step: 0.000 of target");
// the open model keeps it.
func TestClosedModelRefusesRate(t *testing.T) {
	for _, tt := range []struct {
		name, load, slo, want string
	}{
		{"closed, rate", "{vus: [2], step: 200ms}", "rate>=0.95", "plan.yaml:3:6: slo: \"rate>=0.95\" compares the achieved rate with a target rate, and the closed model (virtual users) has none: use throughput>=N/s"},
		{"closed, throughput", "{vus: [2], step: 200ms}", "throughput>=100/s", ""},
		{"open, rate", "{rates: [10], step: 200ms}", "rate>=0.95", ""},
	} {
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: %s\nslo: %q\nscenarios: [{request: {url: /}}]\n", tt.load, tt.slo)
		_, err := Terms(p)
		var input *failure.InputError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Terms = %v, want none", tt.name, err)
		case tt.want != "" && (!errors.As(err, &input) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Terms = %v, want bad input saying %q", tt.name, err, tt.want)
		}
	}
}

// A closed-model run is judged on the absolute throughput>=: a floor
// above what the target answers fails the run, the table giving the worst
// step's throughput.
func TestClosedModelThroughputFloor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := parsePlan(t, "target: http://127.0.0.1:1\nload: {vus: [2], step: 300ms, warmup: 0s}\nslo: throughput>=1000000/s\nscenarios: [{request: {url: /}}]\n")
		res, err := runPlan(t, p, Options{Exchanger: newServer(10, 5*time.Millisecond), GoTimer: true})
		if err != nil {
			t.Fatal(err)
		}
		if text := table(t, res); res.Passed || !strings.Contains(text, "FAIL throughput>=1000000/s (worst step: ") {
			t.Errorf("passed %v; want not, and the worst step's throughput:\n%s", res.Passed, text)
		}
	})
}
