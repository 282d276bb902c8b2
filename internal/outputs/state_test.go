package outputs

import (
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// values maps each sample of name to its value, by the label named by.
func values(samples []sample, name, by string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name != name {
			continue
		}
		for _, l := range s.labels {
			if l.name == by {
				out[l.value] += s.value
			}
		}
	}
	return out
}

// Counters add up over a step's seconds and start again with the next
// step; tag values are kept only for the keys the plan lists as labels.
func TestStateCounters(t *testing.T) {
	s := newState([]string{"tier"})
	ok := metrics.Counts{}
	ok[transport.OK], ok[transport.Timeout] = 10, 2
	sec := run.Second{Label: "10/s", At: time.Now(), Kinds: ok, Late: 1, Scenarios: []string{"home"}, Iterations: []metrics.Counts{ok},
		TagKeys: []string{"tier", "region"}, Tags: []map[string]metrics.Counts{{"gold": ok}, {"eu": ok}}}
	s.second("r", &sec)
	got := s.second("r", &sec)
	if v := values(got, RequestsTotal, "outcome"); v["ok"] != 20 || v["failed"] != 4 || v["limited"] != 0 {
		t.Errorf("requests after two seconds: %v", v)
	}
	if v := values(got, TagIterationsTotal, "tier"); v["gold"] != 24 {
		t.Errorf("tier=gold: %v, want 24 (ok and failed)", v)
	}
	if v := values(got, TagIterationsTotal, "region"); len(v) != 0 {
		t.Errorf("region is not a label, yet written: %v", v)
	}
	sec.Label = "20/s"
	if v := values(s.second("r", &sec), RequestsTotal, "outcome"); v["ok"] != 10 {
		t.Errorf("the next step's counter: %v, want a fresh 10", v)
	}
}

// A finished step writes its quantiles, and its deliveries and sockets
// where it has them.
func TestStateStep(t *testing.T) {
	s := newState(nil)
	st := &results.Step{Figures: results.Figures{TargetRate: 200, LatencyMS: metrics.Latency{P99: 12.5, Max: 40},
		Delivery:  &results.Delivery{Expected: 100, Delivered: 97, Lost: 3},
		WebSocket: &results.Sockets{Open: 50, Opened: 52, Failed: 1, Dropped: 2}}}
	got := s.step("r", st)
	if v := values(got, StepLatencySeconds, "quantile"); v["0.99"] != 0.0125 || v["1"] != 0.04 {
		t.Errorf("quantiles: %v", v)
	}
	if v := values(got, StepDeliveryIDs, "state"); v["expected"] != 100 || v["delivered"] != 97 || v["lost"] != 3 {
		t.Errorf("deliveries: %v", v)
	}
	if v := values(got, StepSockets, "state"); v["open"] != 50 || v["dropped"] != 2 {
		t.Errorf("sockets: %v", v)
	}
	for _, smp := range got {
		if smp.labels[len(smp.labels)-1] != (label{"step", "200/s"}) {
			t.Errorf("%s: labels %v, want step=200/s last", smp.name, smp.labels)
		}
	}
	if v := values(s.step("r", &results.Step{Figures: results.Figures{VUs: 5}}), StepDeliveryIDs, "state"); len(v) != 0 {
		t.Errorf("a step without sinks wrote deliveries: %v", v)
	}
}
