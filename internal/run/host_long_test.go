//go:build long && linux

package run

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// repeatedRun runs 5 repeats of one step at 100/s against url.
func repeatedRun(t *testing.T, url string) *results.Result {
	t.Helper()
	p, err := plan.Parse("plan.yaml", []byte(fmt.Sprintf("target: %s\nload: {rates: [100], step: 800ms, warmup: 200ms}\nrepeat: 5\nscenarios: [{request: {url: /}}]\n", url)))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// hog starts a process per core that burns it, and returns what stops them.
func hog(t *testing.T) func() {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range runtime.NumCPU() {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), spinEnv+"=1")
		testkit.Start(t, cmd)
		cmds = append(cmds, cmd)
	}
	return func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}
}

// The host's business is not the target's, against a server whose delay
// the test sets: an unchanged server compared on a quiet host is the
// same; a CPU hog on every core during the second run only is "could not
// tell" (the host measured busy), never worse; a real +15 % is worse.
// Without a control, the host's own figures tell them apart.
func TestBusyHostGroundTruth(t *testing.T) {
	var delay atomic.Int64
	delay.Store(int64(10 * time.Millisecond))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		start, d := time.Now(), time.Duration(delay.Load())
		for time.Since(start) < 2*time.Millisecond { // work the CPU, which a hog slows
		}
		time.Sleep(d - 3*time.Millisecond) // a timer wakes up to a millisecond late:
		for time.Since(start) < d {        // the last one is waited for exactly
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	o := compare.Options{MinEffect: compare.DefaultMinEffect, MinAbs: compare.DefaultMinAbs}
	// Each pair is tried up to three times: a pair measured busy on one
	// side is the rule working on a machine that cannot show the case, and
	// a real change read as "same" is a machine whose own noise (the race
	// detector's, other packages' tests) was larger than the change. A
	// false alarm on sides equally quiet fails at once: a regression where
	// nothing changed, or "could not tell" or "better" when nothing changed.
	pair := func(name string, change func() func(), want string) {
		for try := 1; ; try++ {
			a := repeatedRun(t, srv.URL)
			undo := change()
			b := repeatedRun(t, srv.URL)
			undo()
			r := compare.Compare(a, b, o)
			t.Logf("%s (try %d): %s; p50 %.2f → %.2f ms; host %.0f%% → %.0f%%", name, try, r.Headline(), a.Steps[0].LatencyMS.P50, b.Steps[0].LatencyMS.P50, deref(r.HostOtherA), deref(r.HostOtherB))
			if r.Verdict == want && (name != "unchanged, a hog during B" || suppressed(r)) {
				return
			}
			// Sides whose other processes' CPU differed by 10 points or more
			// (other packages' tests, under CI) were not the quiet case the
			// pair stands for: tried again, whatever the verdict.
			noisy := math.Abs(deref(r.HostOtherA)-deref(r.HostOtherB)) >= 10
			falseAlarm := !noisy && (r.Verdict == compare.Worse || want == compare.Same && !r.HostBusy)
			if falseAlarm || try == 3 {
				t.Errorf("%s: verdict %s (%s), want %s", name, r.Verdict, r.Headline(), want)
				return
			}
		}
	}
	pair("unchanged, quiet", func() func() { return func() {} }, compare.Same)
	pair("unchanged, a hog during B", func() func() { return hog(t) }, compare.Unknown)
	pair("+15 %, quiet", func() func() {
		delay.Store(int64(11500 * time.Microsecond))
		return func() { delay.Store(int64(10 * time.Millisecond)) }
	}, compare.Worse)
}

// suppressed reports whether a change would have been significant but for
// the busy host: the hog moved the figures, which without the host's own
// figures would have read as a regression.
func suppressed(r *compare.Report) bool {
	for _, c := range r.Changes {
		if c.Suppressed {
			return true
		}
	}
	return false
}

func deref(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
