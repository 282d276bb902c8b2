package dashboard

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/search"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// dashboardShot, with -dashboard-shot, makes TestFindLiveInChromium write
// its screenshot of the live page to docs/dashboard.png (the README's).
var dashboardShot = flag.Bool("dashboard-shot", false, "TestFindLiveInChromium writes docs/dashboard.png")

// browser returns a headless Chromium context, or skips where Chromium is
// not installed (.ci/run installs it).
func browser(t *testing.T) context.Context {
	t.Helper()
	return browserFor(t, 60*time.Second, 1400)
}

// browserFor is browser, for at most d, its window h pixels high.
func browserFor(t *testing.T, d time.Duration, h int) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1200, h),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	return ctx
}

// The page in a real headless Chromium: it loads with the latest body,
// takes each new body from the event stream as it comes (at least twice),
// and shows the final answer with the report's link when the run ends.
func TestPageInChromium(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s, err := Listen(Options{Addr: "127.0.0.1:0", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Publish("find: GET /", "<p id=\"n\">second 0</p>")
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible("#live")); err != nil {
		t.Fatal(err)
	}
	poll := func(expr string) error {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(10*time.Second)))
		return err
	}
	for i := 1; i <= 3; i++ {
		s.Publish(fmt.Sprintf("find: GET / (%d)", i), fmt.Sprintf("<p id=\"n\">second %d</p>", i))
		want := fmt.Sprintf("second %d", i)
		if err := poll(fmt.Sprintf("document.getElementById('n') && document.getElementById('n').textContent === %q", want)); err != nil {
			t.Fatalf("the page did not show %q: %v", want, err)
		}
	}
	s.End("find: GET /", "<p id=\"n\">highest passing: 200/s</p>", []byte("<!doctype html><title>report</title><h1>the report</h1>"))
	if err := poll("document.getElementById('live').dataset.ended === '1'"); err != nil {
		t.Fatalf("the page did not say the run ended: %v", err)
	}
	state, err := chromedp.Run(ctx, chromedp.Text("#state"))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := chromedp.Run(ctx, chromedp.Evaluate[int]("+document.getElementById('live').dataset.bodies"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(state, "The run has ended") || title != "find: GET /" || bodies < 4 {
		t.Errorf("after the end: state %q, title %q, %d bodies from the stream (want 4 at least)", state, title, bodies)
	}
	answer, err := chromedp.Run(ctx, chromedp.Text("#n"))
	if err != nil {
		t.Fatal(err)
	}
	// ceiling exits: the page keeps the report it fetched.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#state a"), chromedp.WaitVisible("h1")); err != nil {
		t.Fatal(err)
	}
	heading, err := chromedp.Run(ctx, chromedp.Text("h1"))
	if err != nil {
		t.Fatal(err)
	}
	if answer != "highest passing: 200/s" || heading != "the report" {
		t.Errorf("final answer %q; the report's link led to %q", answer, heading)
	}
}

// A search with its live page watched in a real headless Chromium, as
// find --dashboard serves it: the page loads while the search runs, takes
// new bodies from the event stream (at least four: the step table filling
// in), and when the search ends shows its answer, the one the terminal
// prints, with the report's link.
func TestFindLiveInChromium(t *testing.T) {
	long(t)
	ctx := browserFor(t, 150*time.Second, 1500)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil { // the browser is up before the run
		t.Fatal(err)
	}
	// For the README's picture, steps long enough to draw their seconds.
	step, bodies := "1s", 4
	if *dashboardShot {
		step, bodies = "4s", 20
	}
	s, cfg, page := findSession(t, step)
	defer s.Close()
	type found struct {
		res *results.Result
		err error
	}
	done := make(chan found, 1)
	go func() {
		res, err := run.Find(context.Background(), s, cfg)
		done <- found{res, err}
	}()
	live, shot := watchLive(t, ctx, page, bodies)
	var f found
	select {
	case f = <-done:
	case <-time.After(80 * time.Second):
		t.Fatal("the search did not end within 80s")
	}
	if f.err != nil || f.res == nil {
		t.Fatalf("the search: %v", f.err)
	}
	// It found the edge (find exits 0), unless this machine was too busy
	// to hold the search's rates.
	if answer := report.FindAnswer(f.res); f.res.Edge == nil && !strings.Contains(answer, "generator limit reached") {
		t.Fatalf("the search found no edge: %s", answer)
	}
	checkEnded(t, ctx, f.res, live)
	saveShot(t, shot)
}

// findSession opens a session of steps of step, with its live page, for a
// search from 50/s against a target of 200/s.
func findSession(t *testing.T, step string) (*run.Session, search.Config, *Server) {
	t.Helper()
	srv := testkit.NewTarget(t, testkit.TargetConfig{Capacity: 200, Body: "ok"})
	p, err := plan.Parse("plan.yaml", []byte("target: "+srv.URL+"\nload: {rates: [50], step: "+step+", warmup: 200ms}\nslo: errors<1%\nscenarios: [{request: {url: /}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := (&run.SearchFlags{Start: "50", Precision: "25%", RateGiven: true}).Config(p)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Listen(Options{Addr: fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	s, err := run.Open(context.Background(), p, run.Options{Out: filepath.Join(t.TempDir(), "r.json"), RefusedStops: true,
		Outputs: []run.Output{NewOutput(page, Feed{})}})
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg, page
}

// watchLive opens the live page while the search runs and waits for it to
// take bodies bodies from the event stream; it returns the page's text
// then and a screenshot (a PNG).
func watchLive(t *testing.T, ctx context.Context, page *Server, bodies int) (live string, shot []byte) {
	t.Helper()
	// The page is served from the session's start.
	if err := chromedp.Do(ctx, chromedp.Navigate(page.URL()), chromedp.WaitVisible("#live")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf("+document.getElementById('live').dataset.bodies >= %d", bodies),
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the page took fewer than %d bodies from the stream: %v", bodies, err)
	}
	live, err := chromedp.Run(ctx, chromedp.Text("#live"))
	if err != nil {
		t.Fatal(err)
	}
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)) // the page while the search runs: a PNG
	if err != nil {
		t.Fatal(err)
	}
	return live, shot
}

// checkEnded checks that the page says the search res ended, with its
// answer and the step table, and that it showed a step (live) while the
// search ran.
func checkEnded(t *testing.T, ctx context.Context, res *results.Result, live string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void]("document.getElementById('live').dataset.ended === '1'",
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the page did not say the run ended: %v", err)
	}
	final, err := chromedp.Run(ctx, chromedp.Text("#live"))
	if err != nil {
		t.Fatal(err)
	}
	state, err := chromedp.Run(ctx, chromedp.Text("#state"))
	if err != nil {
		t.Fatal(err)
	}
	answer := report.FindAnswer(res)
	if !strings.Contains(final, answer) || !strings.Contains(state, "The run has ended") || !strings.Contains(final, "verdict") {
		t.Errorf("the final page lacks the search's answer %q or the step table (state %q):\n%s", answer, state, final)
	}
	if !strings.Contains(live, "step") {
		t.Errorf("the page during the search shows no step:\n%s", live)
	}
}

// saveShot writes the screenshot of the live page to $CEILING_ARTIFACTS
// (or a temporary directory), or with -dashboard-shot to
// docs/dashboard.png.
func saveShot(t *testing.T, shot []byte) {
	t.Helper()
	dir := os.Getenv("CEILING_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	_ = os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "dashboard.png")
	if *dashboardShot {
		path = filepath.Join("..", "..", "docs", "dashboard.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
