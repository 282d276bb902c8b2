package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/schedule"
)

// A step goes over the wire as the protocol's own request, in the JSON
// agents of this API read, and comes back the step it was.
func TestStepRequestWire(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   load.Step
		wire string
	}{
		{"rate", load.Step{Index: 2, Rate: 300, Warmup: time.Second, Length: 5 * time.Second},
			`{"id":"","index":2,"rate":300,"warmup_ns":1000000000,"length_ns":5000000000,"start_unix_nano":0}`},
		{"ramp", load.Step{Rate: 10, Ramp: &schedule.Linear{From: 10, To: 50, Len: 2 * time.Second}, Length: 2 * time.Second},
			`{"id":"","index":0,"rate":10,"ramp_from":10,"ramp_to":50,"ramp":true,"warmup_ns":0,"length_ns":2000000000,"start_unix_nano":0}`},
		{"users", load.Step{Index: 1, VUs: 7, Length: time.Second},
			`{"id":"","index":1,"vus":7,"warmup_ns":0,"length_ns":1000000000,"start_unix_nano":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := stepRequest(tc.st)
			data, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.wire {
				t.Errorf("json.Marshal(stepRequest(%+v)) = %s, want %s", tc.st, data, tc.wire)
			}
			var back StepRequest
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.st, back.loadStep()); diff != "" {
				t.Errorf("the step back from the wire differs (-sent +received):\n%s", diff)
			}
		})
	}
}
