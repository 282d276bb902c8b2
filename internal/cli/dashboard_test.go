package cli

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

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// dashboardShot, with -dashboard-shot, makes TestFindLiveInChromium write
// its screenshot of the live page to docs/dashboard.png (the README's).
var dashboardShot = flag.Bool("dashboard-shot", false, "TestFindLiveInChromium writes docs/dashboard.png")

// find --dashboard watched in a real headless Chromium: the page loads
// while the search runs, takes new bodies from the event stream (at least
// four: the step table filling in), and when find ends shows its answer,
// the one the terminal prints, with the report's link. Skipped where
// Chromium is not installed (.ci/run installs it).
func TestFindLiveInChromium(t *testing.T) {
	long(t)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	srv := capacityServer(t, 200)
	out := filepath.Join(t.TempDir(), "r.json")
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1200, 1500),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 150*time.Second)
	defer cancelTime()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil { // the browser is up before the run
		t.Fatal(err)
	}

	type ran struct {
		code           ExitCode
		stdout, stderr string
	}
	// For the README's picture, steps long enough to draw their seconds.
	step, bodies := "1s", 4
	if *dashboardShot {
		step, bodies = "4s", 20
	}
	done := make(chan ran, 1)
	go func() {
		code, stdout, stderr := ceiling(t, context.Background(), "find", "--url", srv.URL, "--start", "50", "--precision", "25%",
			"--step", step, "--warmup", "200ms", "--slo", "errors<1%", "--out", out, "--dashboard", addr)
		done <- ran{code, stdout, stderr}
	}()
	// The page is served from the session's start.
	var loaded bool
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !loaded; {
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err == nil {
			if title, err := chromedp.Run(ctx, chromedp.Title()); err == nil && title != "" && !strings.Contains(title, addr) {
				loaded = true
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !loaded {
		t.Fatal("the live page did not load within 20s of the start")
	}
	// A navigation that was still settling when the title came (an earlier
	// try's error page) can replace the page's context under the first
	// poll: Chrome then says it cannot find it, and the poll is tried again.
	var polled error
	for try := 0; try < 3; try++ {
		_, polled = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf("+document.getElementById('live').dataset.bodies >= %d", bodies),
			chromedp.WithPollingTimeout(30*time.Second)))
		if polled == nil || !strings.Contains(polled.Error(), "Cannot find context") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if polled != nil {
		t.Fatalf("the page took fewer than %d bodies from the stream: %v", bodies, polled)
	}
	live, err := chromedp.Run(ctx, chromedp.Text("#live"))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // the page while find runs: a PNG
	if err != nil {
		t.Fatal(err)
	}
	var r ran
	select {
	case r = <-done:
	case <-time.After(80 * time.Second):
		t.Fatal("find did not end within 60s")
	}
	if r.code != ExitOK && !strings.Contains(r.stdout, "generator limit reached") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "live page at http://"+addr+"/") {
		t.Errorf("the page's address is not said:\n%s", r.stderr)
	}
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
	answer := report.FindAnswer(readResult(t, out))
	if !strings.Contains(final, answer) || !strings.Contains(state, "The run has ended") || !strings.Contains(final, "verdict") {
		t.Errorf("the final page lacks find's answer %q or the step table (state %q):\n%s", answer, state, final)
	}
	if !strings.Contains(live, "step") {
		t.Errorf("the page during the search shows no step:\n%s", live)
	}
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
