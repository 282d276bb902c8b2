package outputs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
)

// Every kind of live output the plan accepts (plan.OutputKinds, the one
// table of them) is one Apply starts, and the help names each: a kind
// added to the table without its output here fails this test.
func TestEveryOutputKindStarts(t *testing.T) {
	targets := map[string]string{ // a valid target of each kind
		plan.OutputPrometheus: "http://127.0.0.1:1/api/v1/write",
		plan.OutputJSON:       filepath.Join(t.TempDir(), "series.jsonl"),
	}
	p := &plan.Plan{Target: "http://127.0.0.1:1", Scenarios: []plan.Scenario{{Request: plan.Request{URL: "/"}}}, Load: plan.Load{Rates: []float64{1}}}
	for _, k := range plan.OutputKinds {
		target, ok := targets[k.Name]
		if !ok {
			t.Errorf("output kind %q: no target to try it with here (and is it started by Apply?)", k.Name)
			continue
		}
		spec := k.Name + "=" + target
		o, err := (&Flags{Outputs: []string{spec}}).Apply(p, &run.Options{})
		if err != nil {
			t.Errorf("Apply(--output %s) = %v, want it started", spec, err)
			continue
		}
		if len(o.sinks) != 1 {
			t.Errorf("Apply(--output %s) started %d live outputs, want 1", spec, len(o.sinks))
		}
		o.Close()
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&Flags{}).Register(fs)
	const want = "prometheus=URL (remote write, every second) or json=FILE (JSON lines)"
	if usage := fs.Lookup("output").Usage; !strings.Contains(usage, want) {
		t.Errorf("--output's help = %q, want it to list %q", usage, want)
	}
}
