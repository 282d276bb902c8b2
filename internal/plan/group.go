package plan

import "github.com/spf13/pflag"

// FlagGroup is the annotation key of a flag's help group: `--help` lists
// the flags of run, find and sweep under a heading per group ("Load
// flags:"), in the order of FlagGroups, rather than as one list.
const FlagGroup = "ceiling_group"

// The help groups. A package that registers flags files each one under a
// group with InGroup, next to the flag itself.
const (
	GroupShape   = "Shape"      // sweep: the target's shapes and how each starts
	GroupTarget  = "Target"     // what each request is and how it is sent
	GroupLoad    = "Load"       // the levels, their length and model
	GroupSearch  = "Search"     // find's (and a sweep's --find) levels
	GroupSLO     = "SLO"        // the thresholds that decide the exit code
	GroupMonitor = "Monitoring" // watching the target's process and metrics
	GroupOutput  = "Output"     // where the results go and how they look
	GroupAgent   = "Agent"      // other machines: agents, segments
)

// FlagGroups is the order `--help` lists the groups in.
var FlagGroups = []string{GroupShape, GroupTarget, GroupLoad, GroupSearch, GroupSLO, GroupMonitor, GroupOutput, GroupAgent}

// InGroup calls register, which adds flags to fs, and files every flag it
// added under group.
func InGroup(fs *pflag.FlagSet, group string, register func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	register()
	fs.VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			fs.SetAnnotation(f.Name, FlagGroup, []string{group})
		}
	})
}
