//go:build unix

package run

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// serverLog reads a log serveAndLog wrote: the server's pid and its
// arrivals.
func serverLog(t *testing.T, path string) (int, []time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pid := 0
	var at []time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "pid "); ok {
			pid, _ = strconv.Atoi(rest)
		} else if n, err := strconv.ParseInt(line, 10, 64); err == nil {
			at = append(at, time.Unix(0, n))
		}
	}
	return pid, at
}

// eventTarget runs one 2 s step at 100/s against the test binary started
// as a command target (command, which names it as "$BIN"), with one event
// at 500 ms running run, and returns the result and the server's log.
func eventTarget(t *testing.T, command, run string) (*results.Result, int, []time.Time) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	text := fmt.Sprintf(`
target: http://%s
load: {rates: [100], step: 2s, warmup: 0s}
monitor:
  command: %q
  env: {BIN: %q, %s: %q, %s: %q}
  ready_timeout: 10s
scenarios: [{request: {url: /}}]
events: [{name: poke, at: 500ms, run: %q}]
`, addr, command, bin, serverEnv, addr, serverLogEnv, log, run)
	p, err := plan.Parse("plan.yaml", []byte(text))
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, text)
	}
	ctx := context.Background()
	s, err := Open(ctx, p, Options{Out: filepath.Join(dir, "result.json")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	res, _ := s.Run(ctx) // a target killed for good stops the run: its result says so
	if res == nil {
		t.Fatal("Run returned no result")
	}
	pid, at := serverLog(t, log)
	return res, pid, at
}

// The pid an event's command is given is the target's own process, not
// the shell that keeps it, for a program run alone, one exec'd, and one
// started with its environment: kill -STOP freezes the server itself (its
// own log has a gap of the pause), and kill -9 ends it (its log stops,
// and the run says the target died).
func TestEventPidIsTheTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a target process: not in -short")
	}
	for _, command := range []string{`"$BIN"`, `exec "$BIN"`} {
		t.Run("pause "+command, func(t *testing.T) {
			t.Parallel() // each its own target and log; the pause is judged on the server's own clock
			res, _, at := eventTarget(t, command, "kill -STOP {{.target.pid}}; sleep 1; kill -CONT {{.target.pid}}")
			gap := time.Duration(0)
			for i := 1; i < len(at); i++ {
				gap = max(gap, at[i].Sub(at[i-1]))
			}
			if gap < 900*time.Millisecond {
				t.Errorf("largest gap between the server's arrivals %v over %d arrivals, want ≥ 0.9 s: the pause did not reach the server", gap, len(at))
			}
			if len(res.Events) != 1 || res.Events[0].ExitCode == nil || *res.Events[0].ExitCode != 0 {
				t.Errorf("events %+v, want the command run, exit 0", res.Events)
			}
		})
	}
	t.Run("kill", func(t *testing.T) {
		t.Parallel()
		res, pid, at := eventTarget(t, `"$BIN"`, "kill -9 {{.target.pid}}")
		// The kill comes 500 ms into the 2 s window: the server's arrivals,
		// from the preflight's on, span about half a second, and the whole
		// window when the kill missed it.
		if len(at) == 0 {
			t.Fatal("the server logged no arrival")
		}
		if span := at[len(at)-1].Sub(at[0]); span > 1500*time.Millisecond {
			t.Errorf("the server's arrivals span %v (%d of them), want about 0.5 s: the kill missed it", span, len(at))
		}
		if pid <= 0 || syscall.Kill(pid, 0) == nil {
			t.Errorf("the server (pid %d) is still alive", pid)
		}
		if res.Passed || res.Outcome.Status != results.StatusCouldNotRun || !slices.ContainsFunc(res.Outcome.Reasons, func(r results.Reason) bool { return r.Kind == results.ReasonTargetDied }) {
			t.Errorf("passed %v, outcome %+v; want could_not_run: the target died", res.Passed, res.Outcome)
		}
	})
}

// A flow of two requests, against a server that counts what it receives:
// each step's sent and completed are exactly the server's count of the
// window's iterations (both requests of every iteration, those that
// crossed the window's end too), iterations are half of them, and the
// preflight's request is counted apart. Both models, both engines.
func TestFlowCountsMatchTheServer(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"loop", "goroutines"} {
		for _, load := range []string{"{rates: [200], step: 700ms, warmup: 0s}", "{model: closed, vus: [4], step: 500ms, warmup: 0s, think: 5ms}"} {
			t.Run(engine+" "+load, func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				hits := map[string]int{}
				ln := testkit.Listen(t)
				server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					hits[r.URL.Path]++
					mu.Unlock()
					time.Sleep(2 * time.Millisecond)
					w.Write([]byte(`{"id":"x"}`))
				})}
				go server.Serve(ln)
				defer server.Close()
				text := fmt.Sprintf(`
target: http://%s
load: %s
scenarios:
  - steps:
      - request: {method: POST, url: /create}
        extract: {id: {json: id}}
      - request: {url: "/read/{{.id}}"}
`, ln.Addr(), load)
				p, err := plan.Parse("plan.yaml", []byte(text))
				if err == nil {
					err = p.Validate()
				}
				if err != nil {
					t.Fatal(err)
				}
				s, err := Open(t.Context(), p, Options{Goroutines: engine == "goroutines"})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				res, err := s.Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				st := res.Steps[0]
				got := hits["/create"] + hits["/read/x"]
				pre := 0
				if res.Preflight != nil {
					pre = res.Preflight.Requests
				}
				if pre != 1 || st.Sent != st.Completed || int(st.Sent)+pre != got || st.Iterations != int64(hits["/read/x"]) || hits["/create"] != hits["/read/x"]+pre {
					t.Errorf("sent %d, completed %d, iterations %d, preflight %d; the server saw %d creates and %d reads",
						st.Sent, st.Completed, st.Iterations, pre, hits["/create"], hits["/read/x"])
				}
			})
		}
	}
}
