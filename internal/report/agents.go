package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// agentLines says which machines ran the load (a coordinator's agents, a
// merge's segments) and, per step, each one's achieved rate against its
// share, so that a lagging agent shows, and the shares of agents lost
// during a step. Nothing for a run on one machine.
func agentLines(w io.Writer, r *results.Result, prefix string) {
	if len(r.Agents) == 0 {
		return
	}
	var where []string
	for _, a := range r.Agents {
		desc := a.Addr
		if a.Host != "" || a.CPUs > 0 {
			desc += fmt.Sprintf(" (%s, %d CPUs", a.Host, a.CPUs)
			if a.RoundTripMS > 0 {
				desc += fmt.Sprintf(", clock %+.1f ms ± %.1f", a.ClockOffsetMS, a.RoundTripMS/2)
			}
			desc += ")"
		}
		where = append(where, desc)
	}
	fmt.Fprintf(w, "\n%sagents: %d, merged exactly: %s\n", prefix, len(r.Agents), strings.Join(where, "; "))
	for _, s := range r.Steps {
		if len(s.Parts) == 0 && len(s.LostParts) == 0 {
			continue
		}
		var each []string
		for _, p := range s.Parts {
			share := ""
			if p.TargetRate > 0 {
				share = " of " + Rate(p.TargetRate)
			}
			lag := ""
			if p.GeneratorLimited {
				lag = " LIMITED"
			}
			each = append(each, fmt.Sprintf("%s %s%s%s", p.Agent, Rate(p.AchievedRate), share, lag))
		}
		for _, p := range s.LostParts {
			share := Rate(p.TargetRate)
			if p.VUs > 0 {
				share = fmt.Sprintf("%d users", p.VUs)
			}
			each = append(each, fmt.Sprintf("%s LOST after %.1f s (its %s not in the figures)", p.Agent, p.AfterS, share))
		}
		fmt.Fprintf(w, "%sstep %d per agent: %s\n", prefix, s.Index+1, strings.Join(each, ", "))
	}
}
