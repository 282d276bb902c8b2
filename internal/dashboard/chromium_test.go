package dashboard

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser returns a headless Chromium context, or skips where Chromium is
// not installed (.ci/run installs it).
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1200, 1400),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	return ctx
}

// The page in a real headless Chromium: it loads with the latest body,
// takes each new body from the event stream as it comes (at least twice),
// and shows the final answer with the report's link when the run ends.
func TestPageInChromium(t *testing.T) {
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
