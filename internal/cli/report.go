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
		Short: "Render a result as a terminal table, Markdown or a self-contained HTML page",
		Long: `Render a result.json written by run or find: --format text (the terminal
table), md (Markdown in the shape of the seeds' write-ups, with the command
that reproduces the run) or html (one self-contained page with the tables and
plots: load against latency, latency over time, the target's CPU and memory,
the delivery backlog).`,
		Example: `  ceiling report result.json --format md > LOADTEST.md
  ceiling report result.json --format html > report.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := results.Read(args[0])
			if err != nil {
				return badInput("%w", err)
			}
			out := &checked{w: e.stdout}
			switch format {
			case "text":
				report.Text(out, r)
			case "md", "markdown":
				report.Markdown(out, r)
			case "html":
				if err := report.HTML(out, r); err != nil {
					return cannotRun("%w", err)
				}
			default:
				return badInput("--format %q: want text, md or html", format)
			}
			if out.err != nil {
				return cannotRun("write the report: %w", out.err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, md or html")
	return c
}
