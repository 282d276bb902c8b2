package flaggroup

import "github.com/spf13/pflag"

// Annotation is the annotation key of a flag's help group: `--help` lists
// the flags of run, find and sweep under a heading per group ("Load
// flags:"), in the order of Order, rather than as one list.
const Annotation = "ceiling_group"

// The help groups. A package that registers flags files each one under a
// group with In, next to the flag itself.
const (
	Shape   = "Shape"      // sweep: the target's shapes and how each starts
	Target  = "Target"     // what each request is and how it is sent
	Load    = "Load"       // the levels, their length and model
	Search  = "Search"     // find's (and a sweep's --find) levels
	Soak    = "Soak"       // soak's length, windows and horizon
	SLO     = "SLO"        // the thresholds that decide the exit code
	Monitor = "Monitoring" // watching the target's process and metrics
	Output  = "Output"     // where the results go and how they look
	Agent   = "Agent"      // other machines: agents, segments
)

// Order is the order `--help` lists the groups in.
var Order = []string{Shape, Target, Load, Search, Soak, SLO, Monitor, Output, Agent}

// In calls register, which adds flags to fs, and files every flag it
// added under group.
func In(fs *pflag.FlagSet, group string, register func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	register()
	fs.VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			fs.SetAnnotation(f.Name, Annotation, []string{group})
		}
	})
}
