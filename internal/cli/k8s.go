package cli

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/k8s"
)

// k8sCmd is `ceiling k8s`; package k8s does the work (k8s.Flags.Run).
func k8sCmd(e *env) *cobra.Command {
	var f k8s.Flags
	c := &cobra.Command{Use: k8s.Use, Short: k8s.Short, Long: k8s.Long, Example: k8s.Example, Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := f.Run(e.ctx, args, e.stdout, e.stderr)
			if res == nil {
				return runError(err)
			}
			return cmp.Or(show(e, &outputFlags{out: f.Out, wide: f.Wide}, res), outcome(res))
		}}
	f.Register(c.Flags())
	return c
}
