package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// The demo's chat backend and what it is held to. The target posts every
// saved message to the sink from demoLanes lanes; the sink answers after
// demoSinkLatency, so deliveries cap at demoLanes ÷ demoSinkLatency.
const (
	demoLanes       = 8
	demoSinkLatency = 50 * time.Millisecond
	demoSites       = 200
	// demoAckP99MS is the SLO's bound on the acks' p99, in ms.
	demoAckP99MS = 50
	// demoStart and demoMax bound the search, in messages per second.
	demoStart, demoMax float64 = 50, 3200
)

// demoTiming is how long the demo's steps are, and how finely it searches.
type demoTiming struct {
	step, warmup time.Duration
	precision    float64
	// delivered is the share of a step's messages that must reach the sink
	// by the step's end: the tail of a step (the last ~60 ms of messages)
	// is always in flight, a bigger share of a short step.
	delivered float64 // percent
}

var (
	demoFull  = demoTiming{step: 3 * time.Second, warmup: time.Second, precision: 0.05, delivered: 95}
	demoQuick = demoTiming{step: 2 * time.Second, warmup: 500 * time.Millisecond, precision: 0.3, delivered: 93}
)

func demoCmd(e *env) *cobra.Command {
	var quick bool
	var dir string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Find the edge of a built-in chat backend, watched as a separate process (needs nothing else)",
		Long: `Start the built-in chat backend (ceiling demo-target) as a separate process on
loopback, and a Slack-like sink it posts every saved message to; then search for
the highest rate of widget messages (WebSocket frames, each acked once saved) at
which the acks stay fast and the messages reach the sink. Prints the step table
and the edge, and writes DIR/result.json, DIR/report.html and DIR/plan.yaml (the
plan it ran, to run again with ceiling find).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t := demoFull
			if quick {
				t = demoQuick
			}
			return runDemo(e, t, dir)
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "shorter steps and a coarser search: about 20 s instead of under a minute (for CI)")
	c.Flags().StringVar(&dir, "out", "ceiling-demo", "folder for result.json, report.html and plan.yaml")
	return c
}

func runDemo(e *env, t demoTiming, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cannotRun("create demo folder: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return cannotRun("find the ceiling binary to start the demo target: %w", err)
	}
	ports, err := freePorts(2)
	if err != nil {
		return cannotRun("find free loopback ports: %w", err)
	}
	planFile := filepath.Join(dir, "plan.yaml")
	text := demoPlan(exe, planFile, ports[0], ports[1], t)
	if err := os.WriteFile(planFile, []byte(text), 0o644); err != nil {
		return cannotRun("write %s: %w", planFile, err)
	}
	p, err := plan.Parse(planFile, []byte(text))
	if err != nil {
		return cannotRun("demo plan: %w", err) // a bug: the demo writes its own plan
	}
	out, page := filepath.Join(dir, "result.json"), filepath.Join(dir, "report.html")
	cfg := search.Config{Start: demoStart, Max: demoMax, Precision: t.precision}
	res, err := runFind(e, p, &outputFlags{out: out, html: page}, cfg)
	var coded *codedError
	if err != nil && !(errors.As(err, &coded) && coded.code == ExitThreshold) {
		return err
	}
	if res != nil {
		fmt.Fprintf(e.stdout, "\n%s\n", demoStory(res, t))
	}
	fmt.Fprintf(e.stdout, "\nOpen %s for the plots; %s has every figure, per step and per second.\n", page, out)
	fmt.Fprintf(e.stdout, "Run it again with: ceiling find %s --max %g --precision %g%%\n", planFile, demoMax, 100*t.precision)
	fmt.Fprintf(e.stdout, "(the plan starts %s; after go run, that binary is gone: go build or go install ceiling first)\n", exe)
	return err
}

// demoPlan is the plan the demo runs, written out so that it can be read
// and run again. The target is ceiling's own demo-target, started and
// watched as a separate process.
func demoPlan(exe, planFile string, targetPort, sinkPort int, t demoTiming) string {
	target := fmt.Sprintf("127.0.0.1:%d", targetPort)
	command := fmt.Sprintf("exec %s demo-target --addr %s --webhook http://127.0.0.1:%d/slack --job-lanes %d",
		shellQuote(exe), target, sinkPort, demoLanes)
	return fmt.Sprintf(`# Written by ceiling demo: the plan it ran. Run it again with
#   ceiling find %[9]s --max %[11]g --precision %[12]g%%
# (the ports were free when it was written).
name: "ceiling demo: a chat backend whose messages must reach Slack"
target: http://%[1]s
load:
  model: open
  rates: [%[10]g]                        # find starts here and doubles until a step fails
  step: %[2]s
  warmup: %[3]s
vars:
  cid: "{{uuid}}"                       # unique per message (and per run)
  site: "s-{{randInt 1 %[4]d}}"           # %[4]d sites: 16/s each at the largest rate, within the flood brake's burst of 600
scenarios:
  - name: widget
    websocket:
      url: ws://%[1]s/widget
      connections: 50
      send: '{"type":"message","clientId":"{{.cid}}","site":"{{.site}}","text":"hello from the widget"}'
      ack: {json: clientId}             # the target acks a message once it is saved
      ack_timeout: 5s
    delivery: {sink: slack, id: "{{.cid}}"}
sinks:
  - name: slack
    listen: 127.0.0.1:%[5]d
    latency: %[6]s                        # like Slack's webhook; it never says no
    id: {json: clientId}
    drain: 20s
monitor:
  command: %[7]s
  ready: http://%[1]s/health
  prometheus:
    url: http://%[1]s/metrics
    metrics: [demo_queue_depth, 'demo_save_seconds{quantile="0.99"}']
slo: "p99<%[13]dms, errors<1%%, delivered>=%[8]g%%"
`, target, t.step, t.warmup, demoSites, sinkPort, demoSinkLatency, yamlQuote(command), t.delivered, planFile,
		demoStart, demoMax, 100*t.precision, demoAckP99MS)
}

// demoStory says what the search found and what broke first, in the terms
// of the target's design, from the figures of the first failed step: the
// lanes story only when deliveries are what failed.
func demoStory(r *results.Result, t demoTiming) string {
	if r.Search == nil || r.Search.Outcome != search.Edge.String() {
		return "No edge to explain: see the answer above."
	}
	var fail *results.Step
	worstAck := 0.0
	for i := range r.Steps {
		s := &r.Steps[i]
		worstAck = max(worstAck, s.LatencyMS.P99)
		if fail == nil && s.SLOPassed != nil && !*s.SLOPassed {
			fail = s
		}
	}
	if fail == nil {
		return "No step failed."
	}
	d := fail.Delivery
	deliveryFailed := d != nil && d.AtStepEnd != nil && d.Expected > 0 && 100*float64(*d.AtStepEnd)/float64(d.Expected) < t.delivered
	ackFailed := fail.LatencyMS.P99 >= demoAckP99MS || fail.ErrorRate >= 0.01
	if !deliveryFailed || ackFailed {
		return fmt.Sprintf("What broke first, at %.0f/s: acks p99 %.1f ms, errors %.1f%%, not the delivery lanes; on a machine this busy the search measures the machine (see the warnings above).",
			fail.TargetRate, fail.LatencyMS.P99, 100*fail.ErrorRate)
	}
	capacity := float64(demoLanes) / demoSinkLatency.Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "What broke first: the target posts each saved message to the Slack-like sink from %d lanes, and the sink answers after %v, so at most %d ÷ %v = %.0f messages a second can be delivered. At %.0f/s only %d of %d messages had arrived by the step's end",
		demoLanes, demoSinkLatency, demoLanes, demoSinkLatency, capacity, fail.TargetRate, *d.AtStepEnd, d.Expected)
	if fail.Target != nil {
		if m, ok := fail.Target.Metrics["demo_queue_depth"]; ok {
			fmt.Fprintf(&b, " and the job queue held up to %.0f", m.Max)
		}
	}
	b.WriteString(".")
	if worstAck < demoAckP99MS {
		fmt.Fprintf(&b, " The acks never were the limit (worst p99 %.1f ms): saving a message is cheap, posting it is not.", worstAck)
	}
	return b.String()
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// yamlQuote writes s as a double-quoted YAML string.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
