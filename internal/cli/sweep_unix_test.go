//go:build unix

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// exeAsCeiling returns this test binary, quoted for a shell: started by
// a test, it acts as ceiling (TestMain), here as its demo-target.
func exeAsCeiling(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "'" + exe + "'"
}

// ceiling sweep, its launchers, lessons and outcomes are tested in package
// sweep; here, the command: two shapes of the built-in target started by
// the local launcher (ceiling demo-target), the table printed, exit 0, and
// the live page (--dashboard), whose event stream shows the sweep table
// so far above the shape under way as the shapes run, then the last table
// with both shapes and a link to the sweep's report, which is served.
func TestSweep(t *testing.T) {
	t.Parallel()
	exe := exeAsCeiling(t)
	out := filepath.Join(t.TempDir(), "sweep.json")
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	done := make(chan string, 1)
	go func() {
		code, stdout, stderr := ceiling(t, context.Background(), "sweep", "--configs", "1@1/256m 2@1/256m",
			"--cmd", exe+" demo-target --addr 127.0.0.1:{{.port}}", "--ready", "http://127.0.0.1:{{.port}}/health",
			"--url", "http://127.0.0.1:{{.port}}/health", "--rate", "20", "--step", "600ms", "--warmup", "100ms", "--out", out, "--dashboard", addr)
		done <- fmt.Sprintf("exit %d\n%s\n%s", code, stdout, stderr)
	}()
	checkSweepPage(t, addr, done)
	got := <-done
	r := readSweep(t, out)
	if len(r.Configs) != 2 || r.Configs[0].Throughput <= 0 || r.Configs[1].Throughput <= 0 {
		t.Fatalf("sweep.json: %+v, want both shapes measured\n%s", r.Configs, got)
	}
	if starved := strings.HasPrefix(got, "exit 1") && sweepStarved(t, r); !strings.HasPrefix(got, "exit 0") && !starved ||
		!strings.Contains(got, "live page at http://"+addr+"/") || !strings.Contains(got, "* 1w / 1c / 256Mi") && !strings.Contains(got, "* 2w / 1c / 256Mi") && !starved {
		t.Errorf("want exit 0, the table with its best shape, and the live page's address:\n%s", got)
	}
}

// checkSweepPage reads the event stream of the sweep's live page at addr
// to its end (done has the command's output, should the page never
// answer), checks its bodies and end, and the report it then serves.
func checkSweepPage(t *testing.T, addr string, done <-chan string) {
	t.Helper()
	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if resp, err = http.Get("http://" + addr + "/live/events"); err == nil {
			break
		}
	}
	if resp == nil {
		t.Fatalf("the live page did not answer within 20s: %s", <-done)
	}
	defer resp.Body.Close()
	stream, err := io.ReadAll(resp.Body) // to the end: the stream ends with the sweep's
	if err != nil {
		t.Fatal(err)
	}
	checkSweepStream(t, string(stream))
	page, err := http.Get("http://" + addr + "/live/report")
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(report), "Throughput per shape") {
		t.Errorf("the report served is not the sweep's:\n%.500s", report)
	}
}

// checkSweepStream checks a sweep's event stream: a body with the first
// shape's row above the second under way, the last body the whole table,
// and an end that links the report.
func checkSweepStream(t *testing.T, stream string) {
	t.Helper()
	var underWay, last, end string
	for _, e := range strings.Split(stream, "\n\n") {
		switch {
		case strings.HasPrefix(e, "event: body") && strings.Contains(e, "Shape under way: 2w / 1c / 256Mi") && strings.Contains(e, "<td>1w / 1c / 256Mi</td>"):
			underWay = e
		case strings.HasPrefix(e, "event: body"):
			last = e
		case strings.HasPrefix(e, "event: end"):
			end = e
		}
	}
	if underWay == "" {
		t.Errorf("no body showed the first shape's row above the second under way:\n%s", stream)
	}
	if !strings.Contains(last, "ceiling sweep") || !strings.Contains(last, "2w / 1c / 256Mi") || strings.Contains(last, "Shape under way") {
		t.Errorf("the last body is not the sweep's last table:\n%s", last)
	}
	if !strings.Contains(end, `<a href=\"live/report\">`) && !strings.Contains(end, `<a href="live/report">`) {
		t.Errorf("the end links no report: %q", end)
	}
}
