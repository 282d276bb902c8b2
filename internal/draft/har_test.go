package draft

import (
	"os"
	"strings"
	"testing"
)

func demoHAR(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../docs/examples/demo-session.har")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestHARDemoMix(t *testing.T) {
	d, err := FromHAR("demo-session.har", demoHAR(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\nnotes: %q", d.YAML, d.Notes)
	p := parsed(t, d)
	_ = p
	if strings.Contains(string(d.YAML), "9ee2fdb7a1adb423db282574") {
		t.Error("the plan holds the recorded session cookie")
	}
}

func TestHARDemoFlow(t *testing.T) {
	d, err := FromHAR("demo-session.har", demoHAR(t), Options{Flow: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\nnotes: %q", d.YAML, d.Notes)
	parsed(t, d)
}
