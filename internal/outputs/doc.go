// Package outputs sends a run's figures where teams already look, while it
// runs and when it ends: Prometheus remote write (prometheus=URL, pushed
// every second through a bounded queue that never slows the load), a
// Prometheus text endpoint to scrape (--metrics-listen), JSON lines
// (json=FILE, one line per second and per finished step), and for CI a
// JUnit XML report (--junit) and the Markdown report appended to
// $GITHUB_STEP_SUMMARY.
//
// Each is a run.Output in run.Options.Outputs (Apply adds them), as is the
// terminal's live line (Terminal); the series it writes are listed in
// series.go, and docs/grafana's dashboard reads only those (a test holds it
// to them).
//
// Concurrency: Second and Progress run on the step's collector goroutine,
// the other methods on the session's; each remote write target has one
// goroutine that pushes its queue.
package outputs
