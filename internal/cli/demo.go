package cli

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/demo"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// demoSLO is the threshold the demo reads its stairs against.
const demoSLO = "p99<100ms, errors<1%"

func demoCmd(e *env) *cobra.Command {
	var quick bool
	var dir string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run stairs against a built-in target with a real bottleneck (needs nothing else)",
		Long: `Start a small built-in service on loopback (four worker lanes of 5 ms each, so
800 jobs a second, with a bounded queue that answers 503 when full), run open-model
stairs across its capacity, print the step table and write DIR/result.json.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runDemo(e, quick, dir)
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "a few seconds instead of about half a minute (for CI)")
	c.Flags().StringVar(&dir, "out", "ceiling-demo", "folder for result.json")
	return c
}

func runDemo(e *env, quick bool, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cannotRun("create demo folder: %w", err)
	}
	srv, err := demo.Start(demo.Config{})
	if err != nil {
		return cannotRun("%w", err)
	}
	defer srv.Close()
	capacity := srv.Config().Capacity()
	rates := []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5}
	step, warm := 4*time.Second, time.Second
	if quick {
		rates, step, warm = []float64{0.25, 0.75, 1.5}, time.Second, 500*time.Millisecond
	}
	for i := range rates {
		rates[i] *= capacity
	}
	p := &plan.Plan{
		Name:   "ceiling demo: a worker queue of 4 lanes × 5 ms (800/s)",
		Target: srv.URL(),
		Load: plan.Load{
			Model: plan.Open, Rates: rates,
			Step: plan.Duration{Duration: step}, Warmup: &plan.Duration{Duration: warm},
		},
		HTTP:      plan.HTTP{Timeout: plan.Duration{Duration: 5 * time.Second}},
		Scenarios: []plan.Scenario{{Name: "send", Request: plan.Request{Method: "POST", URL: "/send", Body: `{"text":"hi"}`}}},
		SLO:       demoSLO,
	}
	if err := p.Validate(); err != nil {
		return cannotRun("demo plan: %w", err)
	}
	out := filepath.Join(dir, "result.json")
	page := filepath.Join(dir, "report.html")
	res, err := runPlan(e, p, &outputFlags{out: out, html: page})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n%s\n", edgeSentence(res))
	fmt.Fprintf(e.stdout, "\nThe target's nominal capacity is %.0f/s (4 lanes × 5 ms); the achieved column shows what it really served once overloaded, and the table where it bends.\n", capacity)
	fmt.Fprintf(e.stdout, "Open %s for the plots, and %s for every figure, per step and per second.\n", page, out)
	if res.Interrupted {
		return &codedError{code: ExitInterrupted, err: fmt.Errorf("interrupted")}
	}
	return nil
}

// edgeSentence reads the stairs: the highest rate whose step held the SLO
// and the first one above it that did not.
func edgeSentence(r *results.Result) string {
	var pass, fail *results.Step
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.SLOPassed == nil {
			continue
		}
		if *s.SLOPassed && fail == nil {
			pass = s
		} else if !*s.SLOPassed && fail == nil {
			fail = s
		}
	}
	switch {
	case pass == nil && fail == nil:
		return "No step finished."
	case pass == nil:
		return fmt.Sprintf("Even the first step, %.0f/s, failed %s: p99 %.1f ms, errors %.1f%%.",
			fail.TargetRate, demoSLO, fail.LatencyMS.P99, 100*fail.ErrorRate)
	case fail == nil:
		return fmt.Sprintf("Every step held %s, up to %.0f/s (p99 %.1f ms).", demoSLO, pass.TargetRate, pass.LatencyMS.P99)
	}
	return fmt.Sprintf("Held %s up to %.0f/s (p99 %.1f ms); %.0f/s fails: p99 %.1f ms, errors %.1f%%.",
		demoSLO, pass.TargetRate, pass.LatencyMS.P99, fail.TargetRate, fail.LatencyMS.P99, 100*fail.ErrorRate)
}

// demoTargetCmd serves the demo target in the foreground until interrupted:
// the example plans in docs/examples load it, and docs/demo-target.md
// describes its chat backend and limits.
func demoTargetCmd(e *env) *cobra.Command {
	var f demoTargetFlags
	c := &cobra.Command{
		Use:    "demo-target",
		Short:  "Serve the built-in demo target (the example plans load it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := f.config(c.Flags().Changed)
			if err != nil {
				return err
			}
			srv, err := demo.Start(cfg)
			if err != nil {
				return cannotRun("%w", err)
			}
			defer srv.Close()
			fmt.Fprintf(e.stderr, "ceiling demo-target: serving on %s (Ctrl-C stops it)\n", srv.URL())
			<-e.ctx.Done()
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address")
	fl.StringVar(&f.webhook, "webhook", "", "post every saved chat message to this URL (like a Slack webhook); empty: no jobs")
	fl.IntVar(&f.lanes, "job-lanes", 8, "webhook posts in flight at once: delivery capacity is lanes ÷ webhook latency")
	fl.StringVar(&f.store, "store", "memory", "where chat messages are saved: memory or file (one writer at a time either way)")
	fl.StringVar(&f.sync, "sync", "normal", "file store: fsync at most once a second (normal) or after every commit (full)")
	fl.StringVar(&f.dataDir, "data-dir", "", "file store folder (default: a temporary folder removed on exit)")
	fl.Float64Var(&f.floodRate, "flood-rate", 10, "flood brake: messages per second per site after the burst; below 0: no brake")
	fl.IntVar(&f.floodBurst, "flood-burst", 600, "flood brake: messages a site may send at once")
	return c
}

// demoTargetFlags are demo-target's flags.
type demoTargetFlags struct {
	addr, webhook, store, sync, dataDir string
	lanes, floodBurst                   int
	floodRate                           float64
}

// config checks the flags and maps them to the demo target's Config;
// changed reports whether the user set a flag. Every problem is reported.
func (f *demoTargetFlags) config(changed func(string) bool) (demo.Config, error) {
	var bad []string
	if f.store != "memory" && f.store != "file" {
		bad = append(bad, fmt.Sprintf("--store %q: want memory or file", f.store))
	}
	if f.sync != "normal" && f.sync != "full" {
		bad = append(bad, fmt.Sprintf("--sync %q: want normal (fsync once a second) or full (after every commit)", f.sync))
	}
	if f.store == "memory" && (changed("sync") || changed("data-dir")) {
		bad = append(bad, "--sync and --data-dir: only with --store file (the memory store has no file)")
	}
	if f.lanes < 1 {
		bad = append(bad, fmt.Sprintf("--job-lanes %d: want at least 1", f.lanes))
	}
	if f.floodBurst < 1 {
		bad = append(bad, fmt.Sprintf("--flood-burst %d: want at least 1", f.floodBurst))
	}
	if math.IsNaN(f.floodRate) || math.IsInf(f.floodRate, 0) || f.floodRate == 0 {
		bad = append(bad, fmt.Sprintf("--flood-rate %v: want messages per second above 0, or below 0 for no brake", f.floodRate))
	}
	if f.webhook != "" {
		if u, err := url.Parse(f.webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad = append(bad, fmt.Sprintf("--webhook %q: want an http:// or https:// URL", f.webhook))
		}
	}
	if len(bad) > 0 {
		return demo.Config{}, badInput("demo-target: %s", strings.Join(bad, "; "))
	}
	return demo.Config{
		Addr: f.addr, Webhook: f.webhook, JobLanes: f.lanes, Store: f.store, Sync: f.sync, DataDir: f.dataDir,
		FloodRate: f.floodRate, FloodBurst: f.floodBurst,
	}, nil
}
