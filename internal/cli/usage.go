package cli

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
)

// flagsSection is the part of cobra's usage template that lists a
// command's flags as one list; groupUsage replaces it with the flags'
// help groups.
const flagsSection = "\n\nFlags:\n{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}"

// addTemplateFunc registers flagGroups with cobra's templates once: the
// functions are cobra's package state, shared by every Main.
var addTemplateFunc sync.Once

// groupUsage makes --help list the flags of every command under root by
// their help group (flaggroup.In), in the order of flaggroup.Order, and in
// the order they were registered within a group (the order of their
// meaning: --url before --method before --header). A command without
// groups lists its flags as cobra does. (Should cobra's template lose the
// section replaced, the flags are listed as cobra lists them:
// TestHelpGroups fails.)
func groupUsage(root *cobra.Command) {
	addTemplateFunc.Do(func() { cobra.AddTemplateFunc("flagGroups", flagGroups) })
	tmpl := root.UsageTemplate()
	if !strings.Contains(tmpl, flagsSection) {
		return
	}
	root.SetUsageTemplate(strings.Replace(tmpl, flagsSection, "{{flagGroups .}}", 1))
	for _, c := range root.Commands() {
		grouped := false
		c.Flags().VisitAll(func(f *pflag.Flag) { grouped = grouped || len(f.Annotations[flaggroup.Annotation]) > 0 })
		c.Flags().SortFlags = !grouped
	}
}

// flagGroups writes c's flags under a heading per help group ("Load
// flags:"), then those in none under "Flags:" (all of them, for a command
// without groups).
func flagGroups(c *cobra.Command) string {
	sets := map[string]*pflag.FlagSet{}
	var seen []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		group := ""
		if g := f.Annotations[flaggroup.Annotation]; len(g) > 0 {
			group = g[0]
		}
		if sets[group] == nil {
			sets[group] = pflag.NewFlagSet(group, pflag.ContinueOnError)
			sets[group].SortFlags = false
			seen = append(seen, group)
		}
		sets[group].AddFlag(f)
	})
	order := slices.Clone(flaggroup.Order)
	for _, g := range seen {
		if g != "" && !slices.Contains(order, g) {
			order = append(order, g)
		}
	}
	var b strings.Builder
	for _, g := range append(order, "") {
		fs := sets[g]
		if fs == nil || !fs.HasAvailableFlags() {
			continue
		}
		title := "Flags:"
		if g != "" {
			title = g + " flags:"
		}
		fmt.Fprintf(&b, "\n\n%s\n%s", title, strings.TrimRight(fs.FlagUsages(), " \t\n"))
	}
	return b.String()
}
