package demo

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Bad flags are refused, all at once, each problem naming its flag and
// saying why.
func TestFlagsConfig(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--sync", "sometimes", "--store", "file"}, []string{"--sync", `"sometimes"`, "normal", "full"}},
		{[]string{"--sync", "sometimes"}, []string{"--sync", `"sometimes"`}},
		{[]string{"--store", "disk"}, []string{"--store", `"disk"`, "memory or file"}},
		{[]string{"--sync", "full"}, []string{"--sync", "--store file"}},
		{[]string{"--job-lanes", "0"}, []string{"--job-lanes 0", "at least 1"}},
		{[]string{"--flood-burst", "-5"}, []string{"--flood-burst -5"}},
		{[]string{"--flood-rate", "0"}, []string{"--flood-rate 0", "below 0 for no brake"}},
		{[]string{"--flood-rate", "NaN"}, []string{"--flood-rate NaN"}},
		{[]string{"--webhook", "slack.example/hook"}, []string{"--webhook", "http://"}},
		{[]string{"--store", "disk", "--job-lanes", "-1"}, []string{"--store", "--job-lanes"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var f Flags
			fs := pflag.NewFlagSet("demo-target", pflag.ContinueOnError)
			f.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			_, err := f.Config(fs.Changed)
			if err == nil {
				t.Fatalf("Config(%q) = nil error, want refused", tt.args)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Config(%q) = %q, want it to mention %s", tt.args, err, w)
				}
			}
		})
	}
	var f Flags
	fs := pflag.NewFlagSet("demo-target", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"--store", "file", "--sync", "full", "--data-dir", t.TempDir(), "--webhook", "http://127.0.0.1:1/hook",
		"--job-lanes", "2", "--flood-rate", "-1", "--flood-burst", "10"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Config(fs.Changed); err != nil {
		t.Errorf("Config(good flags) = %v, want none", err)
	}
}
