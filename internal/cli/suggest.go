package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// flagAliases are the names other load generators give ceiling's flags,
// with the flag each means here: an unknown --rps suggests --rate.
var flagAliases = map[string]string{
	// the arrival rate: vegeta -rate, wrk2 and autocannon -R, hey -q, k6 --rps
	"rps": "rate", "qps": "rate", "R": "rate", "q": "rate", "arrival-rate": "rate", "requests-per-second": "rate",
	// a step's length: k6 --duration, wrk and autocannon -d, hey -z
	"duration": "step", "d": "step", "z": "step",
	// concurrency: wrk, hey and autocannon -c, k6 -u
	"connections": "vus", "c": "vus", "concurrency": "vus", "users": "vus", "u": "vus",
	// the request: curl, wrk, hey and autocannon -H, hey -m, curl -X, autocannon -b
	"H": "header", "m": "method", "X": "method", "b": "body", "data": "body",
	// curl -k and -L, k6 --insecure-skip-tls-verify
	"k": "insecure", "insecure-skip-tls-verify": "insecure", "L": "follow-redirects", "location": "follow-redirects",
	// k6 thresholds
	"threshold": "slo", "thresholds": "slo",
	"h2": "http2",
}

// flagError is the bad-input error of a flag cobra could not parse. An
// unknown flag gets suggestions (suggestFlags): the flags of c it most
// likely meant, or the commands that take it.
func flagError(c *cobra.Command, err error) error {
	return badInput("%w%s\nSee '%s --help'.", err, suggestFlags(c, err), c.CommandPath())
}

// suggestFlags says what an unknown flag in err may have meant: c's flags
// that other tools call by its name (flagAliases), that it is a prefix of,
// or that are within c's root's SuggestionsMinimumDistance edits of it
// (cobra's rule for commands), one edit for every three letters typed at
// most (two edits turn --rps into --vus); failing those, the other
// commands that take a flag of that name. It is "" when there is nothing
// to say.
func suggestFlags(c *cobra.Command, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ""
	}
	names := []string{ne.GetSpecifiedName()}
	if short := ne.GetSpecifiedShortnames(); short != "" {
		// "-rate=50", "-rps 50": a long flag given one dash reads as
		// shorthands; the whole word is what was meant.
		word, _, _ := strings.Cut(short, "=")
		if len(word) > 1 {
			names = []string{word, ne.GetSpecifiedName()}
		}
	}
	var found []*pflag.Flag
	add := func(f *pflag.Flag) {
		if f != nil && !f.Hidden && !slices.Contains(found, f) {
			found = append(found, f)
		}
	}
	flags := c.Flags()
	for _, name := range names {
		add(flags.Lookup(name)) // -rate for --rate
		add(flags.Lookup(flagAliases[name]))
	}
	if typed := strings.ToLower(names[0]); len(typed) > 2 {
		limit := min(c.Root().SuggestionsMinimumDistance, len(typed)/3)
		flags.VisitAll(func(f *pflag.Flag) {
			if strings.HasPrefix(f.Name, typed) || plan.Distance(typed, f.Name) <= limit {
				add(f)
			}
		})
	}
	if len(found) > 0 {
		width := 0
		for _, f := range found {
			width = max(width, len(f.Name))
		}
		var b strings.Builder
		b.WriteString("\n\nDid you mean this?\n")
		for _, f := range found {
			fmt.Fprintf(&b, "\t--%-*s  %s\n", width, f.Name, f.Usage)
		}
		return b.String()
	}
	var takers []string
	for _, other := range c.Root().Commands() {
		if f := other.Flags().Lookup(names[0]); other != c && f != nil && !f.Hidden && !other.Hidden {
			takers = append(takers, other.CommandPath())
		}
	}
	switch {
	case len(takers) > 0 && c.HasParent():
		return fmt.Sprintf("\n\n--%s is a flag of %s, not of %s\n", names[0], strings.Join(takers, ", "), c.CommandPath())
	case len(takers) > 0:
		return fmt.Sprintf("\n\n--%s is a flag of %s\n", names[0], strings.Join(takers, ", "))
	}
	return ""
}
