// Package outputs sends a run's figures where teams already look, while it
// runs and when it ends: Prometheus remote write (prometheus=URL, pushed
// every second through a bounded queue that never slows the load), a
// Prometheus text endpoint to scrape (--metrics-listen), JSON lines
// (json=FILE, one line per second and per finished step), and for CI a
// JUnit XML report (--junit) and the Markdown report appended to
// $GITHUB_STEP_SUMMARY.
//
// It is wired to a run through run.Options' OnSecond and OnStep hooks; the
// series it writes are listed in series.go, and docs/grafana's dashboard
// reads only those (a test holds it to them).
//
// Concurrency: the hooks run on the step's collector goroutine; each remote
// write target has one goroutine that pushes its queue.
package outputs
