package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/draft"
	"github.com/ceiling-dev/ceiling/internal/failure"
)

func initCmd(e *env) *cobra.Command {
	var (
		f     draft.Flags
		out   string
		force bool
	)
	c := &cobra.Command{
		Use:   "init --curl 'curl …' | --har FILE | --openapi FILE [--out PLAN.yaml]",
		Short: "Write a plan from what you already have: curl commands, a browser's HAR recording, an OpenAPI document",
		Long: `Draft a plan (commented YAML) from curl command lines (one scenario each), a HAR recording
(a weighted mix of its endpoints, or --flow: one flow in recorded order) or an OpenAPI 3.0/3.1
document (one scenario per operation, reads first). Secrets are never written into the plan:
credentials are read from environment variables ({{env "NAME"}}), which init names, and values a
recorded answer handed out (session cookies, CSRF and bearer tokens) are extracted. A value the
source did not give is a {{TODO "..."}} stub that ceiling validate lists with its place
(docs/init.md).`,
		Example: `  ceiling init --curl 'curl -X POST https://api.example.com/v1/send -H "Authorization: Bearer $TOKEN" -d @body.json' --out plan.yaml
  ceiling init --har session.har --flow --out plan.yaml
  ceiling init --openapi api.yaml --login login --unsafe --out plan.yaml`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if out != "" && !force {
				if _, err := os.Stat(out); err == nil {
					return badInput("%s exists: give another --out, or --force to write over it", out)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return badInput("%w", err)
				}
			}
			f.File = out
			d, err := f.Draft(e.ctx)
			if err != nil && e.ctx.Err() != nil {
				// Stopped (Ctrl-C, SIGTERM): nothing was written.
				return &codedError{code: ExitInterrupted, err: failure.ErrInterrupted}
			}
			if err != nil {
				return badInput("%w", err)
			}
			// The bodies too large for the plan go next to it, written
			// over only with --force, as the plan is.
			if !force {
				for _, file := range d.Files {
					if _, err := os.Lstat(file.Name); err == nil {
						return badInput("%s exists: the plan's body would go there; give another --out, or --force to write over it", file.Name)
					}
				}
			}
			for _, file := range d.Files {
				if err := os.WriteFile(file.Name, file.Data, 0o644); err != nil {
					return cannotRun("write a body of the plan: %w", err)
				}
			}
			if out == "" {
				if _, err := e.stdout.Write(d.YAML); err != nil {
					return cannotRun("write the plan: %w", err)
				}
			} else if err := os.WriteFile(out, d.YAML, 0o644); err != nil {
				return cannotRun("write the plan: %w", err)
			}
			printDraft(e, out, d)
			return nil
		},
	}
	f.Register(c.Flags())
	c.Flags().StringVar(&out, "out", "", "write the plan to this file (default: standard output, and nothing else there)")
	c.Flags().BoolVar(&force, "force", false, "write over --out if it exists")
	return c
}

// printDraft says on stderr what a draft holds and what is left to do;
// out is where it was written, "" for standard output.
func printDraft(e *env, out string, d *draft.Draft) {
	s := "s"
	if d.Scenarios == 1 {
		s = ""
	}
	if out == "" {
		fmt.Fprintf(e.stderr, "drafted %d scenario%s\n", d.Scenarios, s)
		out = "PLAN.yaml"
	} else {
		fmt.Fprintf(e.stderr, "wrote %s: %d scenario%s\n", out, d.Scenarios, s)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(e.stderr, "  %s\n", n)
	}
	for _, f := range d.Files {
		fmt.Fprintf(e.stderr, "wrote %s: a request's body, which the plan reads (body_file)\n", f.Name)
	}
	if len(d.Env) > 0 {
		fmt.Fprintln(e.stderr, "set before validate and run (the plan reads them; it holds no secret):")
		for _, v := range d.Env {
			fmt.Fprintf(e.stderr, "  %s: %s\n", v.Name, v.What)
		}
	}
	if n := len(d.TODOs); n == 1 {
		fmt.Fprintf(e.stderr, "1 value to fill in ({{TODO}}): ceiling validate %s says where\n", out)
	} else if n > 1 {
		fmt.Fprintf(e.stderr, "%d values to fill in ({{TODO}}): ceiling validate %s lists them\n", n, out)
	}
	fmt.Fprintf(e.stderr, "next: ceiling validate %s && ceiling run %s\n", out, out)
}
