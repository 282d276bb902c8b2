package demo

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// What `ceiling demo` loads the chat backend with, and holds it to. The
// target posts every saved message to the sink from Lanes lanes; the sink
// answers after SinkLatency, so deliveries cap at Lanes ÷ SinkLatency.
const (
	// Lanes is how many webhook posts the target keeps in flight.
	Lanes = 8
	// SinkLatency is how long the Slack-like sink takes to answer.
	SinkLatency = 50 * time.Millisecond
	// AckP99MS is the SLO's bound on the acks' p99, in milliseconds.
	AckP99MS = 50
	// SearchStart and SearchMax bound the search, in messages per second.
	SearchStart, SearchMax float64 = 50, 3200
	// sites is how many sites the messages are spread over.
	sites = 200
)

// PlanConfig says where the demo's plan runs and how finely it searches.
type PlanConfig struct {
	// Exe is the ceiling binary that serves the target (demo-target).
	Exe string
	// File is where the plan is written, for the comment that says how to
	// run it again.
	File string
	// TargetPort and SinkPort are free loopback ports for the target and
	// the Slack-like sink.
	TargetPort, SinkPort int
	// Step and Warmup are each step's counted window and warm-up.
	Step, Warmup time.Duration
	// Precision is the search's precision, a fraction.
	Precision float64
	// DeliveredPct is the share of a step's messages that must reach the
	// sink by the step's end, in percent.
	DeliveredPct float64
}

// Plan is the plan `ceiling demo` runs, written out so that it can be read
// and run again: widget messages over 50 sockets, each acked once saved and
// expected at the Slack-like sink, against this package's chat backend
// started (as `ceiling demo-target`) and watched as a separate process.
// Its sites stay under the flood brake up to 2000 messages a second; past
// that, a message the brake rejects counts as limited (the plan's reject
// names the brake's answer, and only it: a store failure is no design).
func Plan(c PlanConfig) string {
	target := fmt.Sprintf("127.0.0.1:%d", c.TargetPort)
	command := fmt.Sprintf("exec %s demo-target --addr %s --webhook http://127.0.0.1:%d/slack --job-lanes %d",
		shellQuote(c.Exe), target, c.SinkPort, Lanes)
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
      reject: {regex: '"ref":"([^"]+)","reason":"flood"'}   # the flood brake's answer: limited, not ws_no_ack
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
`, target, c.Step, c.Warmup, sites, c.SinkPort, SinkLatency, yamlQuote(command), c.DeliveredPct, c.File,
		SearchStart, SearchMax, 100*c.Precision, AckP99MS)
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// yamlQuote writes s as a double-quoted YAML string.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// FreePorts returns n loopback ports that were free a moment ago.
func FreePorts(n int) ([]int, error) {
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

// EventsPlan is the demo's second act (ceiling demo --events): one 10 s
// step of widget messages at rate, with the chat backend restarted 3 s in,
// as a deploy does: its messages acked but still queued for Slack are in
// its memory, and the sink counts which never arrive ("what happens to
// in-flight messages when we deploy?").
func EventsPlan(c PlanConfig, rate float64) string {
	c.Step, c.Warmup, c.DeliveredPct, c.Precision = 10*time.Second, 2*time.Second, 99, 0.05
	text := strings.Replace(Plan(c), fmt.Sprintf("rates: [%g]", SearchStart), fmt.Sprintf("rates: [%g]", rate), 1)
	text = strings.Replace(text, "# Written by ceiling demo: the plan it ran. Run it again with\n#   ceiling find", "# Written by ceiling demo --events: the plan of its second act. Run it again with\n#   ceiling run", 1)
	return strings.Replace(text, `slo: "`, `slo: "recovery<5s, `, 1) + "events:\n  - {name: deploy, at: 3s, action: restart}\n"
}
