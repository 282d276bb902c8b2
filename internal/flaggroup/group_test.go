package flaggroup

import (
	"testing"

	"github.com/spf13/pflag"
)

// In files the flags registered inside it under its group, and only those.
func TestIn(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Bool("before", false, "")
	In(fs, Load, func() { fs.String("rate", "", ""); fs.String("step", "", "") })
	In(fs, Output, func() { fs.String("out", "", "") })
	for name, want := range map[string]string{"before": "", "rate": Load, "step": Load, "out": Output} {
		got := ""
		if g := fs.Lookup(name).Annotations[Annotation]; len(g) > 0 {
			got = g[0]
		}
		if got != want {
			t.Errorf("group of --%s = %q, want %q", name, got, want)
		}
	}
}
