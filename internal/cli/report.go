package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

func reportCmd(e *env) *cobra.Command {
	var format string
	var wide bool
	c := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a result as a terminal table, Markdown or a self-contained HTML page",
		Long: `Render a result.json of run or find: --format text (the terminal table), md (Markdown,
with the command that reproduces the run) or html (a self-contained page with plots; docs/cli.md).`,
		Example: `  ceiling report result.json --format md > LOADTEST.md
  ceiling report result.json --format html > report.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := results.Read(args[0])
			if err != nil {
				return badInput("%w", err)
			}
			text := func(w io.Writer, r *results.Result) error { return report.TextWidth(w, r, e.tableWidth(wide)) }
			render := map[string]func(io.Writer, *results.Result) error{
				"text": text, "md": report.Markdown, "markdown": report.Markdown, "html": report.HTML,
			}[format]
			if render == nil {
				return badInput("--format %q: want text, md or html", format)
			}
			if err := render(e.stdout, r); err != nil {
				return cannotRun("write the report: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, md or html")
	c.Flags().BoolVar(&wide, "wide", false, "text: every column of the table; on a terminal narrower than the table, columns are otherwise left out")
	return c
}
