//go:build unix

package dashboard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// floodConns is how many idle connections a flood opens: more than the
// open-file limit (floodFDLimit) of the process it is aimed at.
const (
	floodConns   = 700
	floodFDLimit = 512
)

// startChild starts this test binary as a child (asChild) with args, its
// open-file limit lowered to floodFDLimit, in a process group that dies
// with the test; done receives its exit and output.
func startChild(t *testing.T, args ...string) (done <-chan string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, floodFDLimit), exe}, args...)...)
	cmd.Env = append(os.Environ(), asChild+"=1")
	testkit.Group(t, cmd)
	ch := make(chan string, 1)
	go func() {
		out, err := cmd.CombinedOutput()
		ch <- fmt.Sprintf("%v\n%s", err, out)
	}()
	return ch
}

// answering waits until url gives an HTTP answer.
func answering(t *testing.T, url string, done <-chan string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		select {
		case out := <-done:
			t.Fatalf("%s did not answer: the child ended: %s", url, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within 20s", url)
		}
	}
}

// flood opens floodConns idle connections to addr and holds them until
// the test ends (those the other end closes stay closed).
func flood(t *testing.T, addr string) {
	t.Helper()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range floodConns {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue // a full backlog: the flood is what it is
		}
		conns = append(conns, c)
	}
}

// Idle connections to the live page, more than the run's open-file limit,
// leave the run's figures as a flood of the same size aimed at another
// process leaves them: no failure of ceiling's own, and, when this
// machine let both runs hold their rate, the same verdict and a p99
// within a generous ratio (two shared cores). Every request needs a new
// connection (the target closes each).
func TestLivePageFloodLeavesTheRunAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // the target's own time
		w.Header().Set("Connection", "close")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	other := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	answering(t, "http://"+other+"/", startChild(t, "serve", other))

	run := func(name string, at func(page string) string) results.Step {
		t.Helper()
		page := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
		out := filepath.Join(t.TempDir(), "r.json")
		done := startChild(t, "run", srv.URL, page, out)
		answering(t, "http://"+page+"/", done)
		flood(t, at(page))
		select {
		case output := <-done:
			r, err := results.Read(out)
			if err != nil || len(r.Steps) != 1 {
				t.Fatalf("%s: no step in result.json (%v): %s", name, err, output)
			}
			return r.Steps[0]
		case <-time.After(40 * time.Second):
			t.Fatalf("%s: the run did not end within 40s", name)
		}
		return results.Step{}
	}
	control := run("control (a flood aimed at another process)", func(string) string { return other })
	flooded := run("a flood aimed at the live page", func(page string) string { return page })
	t.Logf("p99 %.2f ms with a flood elsewhere, %.2f ms with the live page flooded; verdicts %s, %s",
		control.LatencyMS.P99, flooded.LatencyMS.P99, control.Verdict, flooded.Verdict)
	if flooded.Failed > control.Failed || flooded.Errors["generator"] > 0 || flooded.Generator != nil && flooded.Generator.ConnLimit > 0 && flooded.Generator.ConnLimit < 16 {
		t.Errorf("with the live page flooded: %d failed %v, generator %+v; with a flood elsewhere %d failed %v",
			flooded.Failed, flooded.Errors, flooded.Generator, control.Failed, control.Errors)
	}
	if control.GeneratorLimited || flooded.GeneratorLimited {
		// This machine could not hold the rate in one of the runs (a busy
		// neighbour): their verdicts and latencies measure the machine.
		t.Logf("a run was GENERATOR LIMITED: verdicts and p99 not compared")
		return
	}
	if flooded.Verdict != control.Verdict {
		t.Errorf("verdict %s (%s) with the live page flooded, %s (%s) with a flood elsewhere",
			flooded.Verdict, flooded.VerdictReason, control.Verdict, control.VerdictReason)
	}
	if limit := 3*control.LatencyMS.P99 + 20; flooded.LatencyMS.P99 > limit {
		t.Errorf("p99 %.2f ms with the live page flooded, more than 3 × %.2f ms + 20 ms (a flood elsewhere)", flooded.LatencyMS.P99, control.LatencyMS.P99)
	}
}
