package results

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A target watched through its metrics endpoint alone has no CPU or
// memory figures: result.json leaves them out rather than write 0 % and
// 0 MB; one whose process was read keeps them, zeros included.
func TestTargetJSONLeavesOutWhatWasNotMeasured(t *testing.T) {
	scrapedOnly := Target{Samples: 10, Scrapes: 10, Metrics: map[string]Metric{"queue_depth": {Last: 3}}}
	data, err := json.Marshal(scrapedOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"cpu_pct", "rss_mb", "rss_max_mb"} {
		if strings.Contains(string(data), `"`+absent+`"`) {
			t.Errorf("a target watched only by its metrics: %s has %s", data, absent)
		}
	}
	var back Target
	if err := json.Unmarshal(data, &back); err != nil || back.Measured() || back.Metrics["queue_depth"].Last != 3 {
		t.Errorf("read back: %+v (%v), want not measured, its metrics kept", back, err)
	}
	read := Target{Samples: 10, SourceSamples: 10, CPUPct: 0, RSSMB: 12.5, RSSMaxMB: 13}
	data, _ = json.Marshal(read)
	for _, present := range []string{`"cpu_pct":0`, `"rss_mb":12.5`, `"rss_max_mb":13`} {
		if !strings.Contains(string(data), present) {
			t.Errorf("a process read: %s lacks %s", data, present)
		}
	}
}

// A target that died before its first CPU sample is said to have died, as
// one that died after: the note does not wait for a sample.
func TestTargetDiedBeforeItsFirstSample(t *testing.T) {
	for _, samples := range []int{0, 3} {
		r := &Result{Steps: []Step{{Figures: Figures{Model: "open", TargetRate: 100, DurationS: 1, Completed: 10, OK: 10, Interrupted: true,
			Errors: map[string]int64{}, Target: &Target{Died: "killed by SIGKILL", Samples: samples}}}}}
		r.Judge(DefaultRules)
		if s := r.Steps[0]; !slices.Contains(s.Notes, "the target died (killed by SIGKILL)") || s.Verdict != Invalid {
			t.Errorf("%d samples: verdict %s, notes %q; want INVALID and the target's death said", samples, s.Verdict, s.Notes)
		}
	}
}
