package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

func compareCmd(e *env) *cobra.Command {
	format, threshold, minEffect, fail := "", "", 0.0, false
	var minAbs time.Duration
	c := &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Compare a run with a baseline: deltas, and whether they are beyond the noise",
		Long: `The change of throughput, p50, p95, p99 and error rate per step and scenario
from A (the baseline) to B, and whether it is beyond the noise; and of each
step's deliveries (share delivered, delivery p50 and p99) and watched
target (CPU, memory) where both have them (docs/compare.md).`,
		Example: `  ceiling compare base.json new.json --format md --threshold 'p99:+10%,throughput:-5%' --fail-on-regression`,
		Args:    cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			render := report.CompareFormats[format]
			if render == nil {
				return badInput("--format %q: want text, md, json or html", format)
			}
			o, err := compare.ParseOptions(threshold, minEffect, minAbs)
			if err != nil {
				return badInput("%w", err)
			}
			a, err := results.Read(args[0])
			b, errb := results.Read(args[1])
			if err = errors.Join(err, errb); err != nil {
				return badInput("%w", err)
			}
			o.A, o.B = args[0], args[1]
			r := compare.Compare(a, b, o)
			if err := render(e.stdout, r); err != nil {
				return cannotRun("write the comparison: %w", err)
			}
			switch {
			case r.Failed(fail):
				return &codedError{code: ExitThreshold, err: errors.New("compare: " + r.Verdict)}
			case fail && r.CouldNotTell():
				return &codedError{code: ExitCouldNotTell, err: errors.New("compare: could not tell: the control moved (host busy)")}
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, md, json or html")
	c.Flags().BoolVar(&fail, "fail-on-regression", false, "exit 1 when a significant change is worse, 4 when the control moved (could not tell)")
	c.Flags().StringVar(&threshold, "threshold", "", "exit 1 past these deltas, e.g. 'p99:+10%,throughput:-5%'")
	c.Flags().Float64Var(&minEffect, "min-effect", compare.DefaultMinEffect, "smallest change, in percent, that can count")
	c.Flags().DurationVar(&minAbs, "min-abs", compare.DefaultMinAbs, "smallest move of a latency that can count (or 1 % of its p50, whichever is larger)")
	return c
}
