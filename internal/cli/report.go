package cli

import (
	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

func reportCmd(e *env) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a result as a terminal table or Markdown",
		Long: `Render a result.json written by run or find: --format text (the terminal
table) or md (Markdown in the shape of the seeds' write-ups, with the command
that reproduces the run).`,
		Example: `  ceiling report result.json --format md > LOADTEST.md`,
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := results.Read(args[0])
			if err != nil {
				return badInput("%w", err)
			}
			switch format {
			case "text":
				report.Text(e.stdout, r)
			case "md", "markdown":
				report.Markdown(e.stdout, r)
			case "html":
				return badInput("--format html is not available yet: use text or md")
			default:
				return badInput("--format %q: want text or md", format)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or md")
	return c
}
