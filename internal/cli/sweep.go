package cli

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/agent"
	"github.com/ceiling-dev/ceiling/internal/dashboard"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/sweep"
)

func sweepCmd(e *env) *cobra.Command {
	var q quickFlags
	var f sweep.Flags
	var d agent.Flags
	var dash dashboard.Flags
	c := &cobra.Command{
		Use:   "sweep [SWEEP.yaml]",
		Short: "Run the same load against the target under several shapes (workers × CPUs × memory): which to deploy?",
		Long: `Start the target fresh under each shape (local: a cgroup with its CPU quota and memory limit; docker/podman:
--cpus and --memory; command: your apply and teardown), run the same load (or --find its edge), print the sweep
table (docs/sweep.md). --cmd, --env, --ready, --url, --target are templates ({{.port}}, {{.workers}}, {{.cpus}}...).
Writes sweep.json and a folder sweep/ (each shape's result.json and logs) in the working directory; --out moves both.
Exits 3 when every shape failed to start, or when the target refused every scenario's request before the first step.`,
		Example: `  ceiling sweep --configs "1@0.5/256m 1@1/512m 2@1/512m" --cmd 'ceiling demo-target --addr 127.0.0.1:{{.port}}' \
    --ready 'http://127.0.0.1:{{.port}}/health' --url 'http://127.0.0.1:{{.port}}/burn' --vus 8 --step 20s
  ceiling sweep sweep.yaml --need 1500/s --md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := f.Spec(strings.Join(args, ""), plan.Quick(q), c.Flags().Changed, e.args)
			if err != nil {
				return badInput("%w", err)
			}
			s.Run = run.Options{Args: e.args, Version: version(), Lifecycle: e.life}
			s.Connect = func(p *plan.Plan, o *run.Options) error { return d.Apply(e.ctx, p, version(), o) }
			if !f.Quiet {
				s.Run.OnNote = func(note string) { fmt.Fprintf(e.stderr, "ceiling: %s\n", note) }
			}
			page, err := dash.Listen()
			if err != nil {
				return badInput("%w", err)
			}
			if page != nil {
				live := livePage(page, &s)
				defer live()
				fmt.Fprintf(e.stderr, "ceiling: live page at %s\n", page.Addr())
			}
			res, err := sweep.Run(e.ctx, s)
			if res != nil && len(res.Configs) > 0 {
				if werr := sweep.Write(e.stdout, res, f.Markdown, f.HTML); werr != nil {
					return cannotRun("%w", werr)
				}
			}
			if err != nil || res == nil {
				return runError(err)
			}
			return exitOf(res.Outcome, firstReason(res.Outcome))
		},
	}
	q.register(c)
	f.Register(c.Flags())
	d.Register(c.Flags(), false)
	dash.Register(c.Flags())
	return c
}

// livePage makes page the sweep's live page: the sweep table so far and
// the shape under way above its run, as each shape's run goes; the
// returned function ends the page with the sweep's last table and its
// report, and stops serving it.
func livePage(page *dashboard.Server, s *sweep.Spec) func() {
	var (
		mu    sync.Mutex
		above string
		last  []byte // the sweep's HTML report
		final string
	)
	s.OnShape = func(r *sweep.Result, next string) {
		body, err := sweep.Body(r)
		if err != nil {
			body = "<p>" + html.EscapeString(err.Error()) + "</p>"
		}
		var doc bytes.Buffer
		_ = sweep.HTML(&doc, r)
		mu.Lock()
		defer mu.Unlock()
		final, last = body, doc.Bytes()
		above = body
		if next != "" {
			above += "<h2>Shape under way: " + html.EscapeString(next) + "</h2>\n"
		}
	}
	s.Run.Outputs = append(s.Run.Outputs, dashboard.NewOutput(page, dashboard.Feed{Many: true, Title: "ceiling sweep", Above: func() string {
		mu.Lock()
		defer mu.Unlock()
		return above
	}}))
	return func() {
		mu.Lock()
		body, doc := final, last
		mu.Unlock()
		if body == "" {
			body = "<p>The sweep ended before its first shape.</p>"
		}
		page.End("ceiling sweep", body, doc)
		_ = page.Close()
	}
}
