package k8s

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// parse registers Flags on a new flag set and parses args.
func parse(t *testing.T, args ...string) (*Flags, []string, int) {
	t.Helper()
	var f Flags
	fs := pflag.NewFlagSet("k8s", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f, fs.Args(), fs.ArgsLenAtDash()
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlagsOptions(t *testing.T) {
	planFile := writeFile(t, "checkout.yaml", testPlan)
	tokenFile := writeFile(t, "token", "s3cret\n")
	f, args, dash := parse(t, planFile, "--agents", "3", "--find", "--namespace", "lt", "--token-file", tokenFile, "--image", "ceiling:dev", "--", "--start", "50")
	o, err := f.Options(args, dash)
	if err != nil {
		t.Fatalf("Options = %v", err)
	}
	if o.Agents != 3 || !o.Find || o.Namespace != "lt" || o.Token != "s3cret" || o.PlanName != "checkout.yaml" ||
		string(o.Plan) != testPlan || !slices.Equal(o.Args, []string{"--start", "50"}) {
		t.Errorf("Options = %+v, want 3 agents, find, namespace lt, the token without its newline, the plan, --start 50", o)
	}
	if o.Name != "ceiling" || o.Image != "ceiling:dev" || o.CPU != "1" || o.Memory != "512Mi" || o.AgentsTimeout != defaultAgentsTimeout ||
		o.Deadline != DefaultDeadline || o.TTL != DefaultTTL || !o.NetworkPolicy || o.PlanLoad != 0 {
		t.Errorf("Options = %+v, want the defaults (and no planned length for a search)", o)
	}
}

func TestFlagsOptionsDeadline(t *testing.T) {
	planFile := writeFile(t, "checkout.yaml", testPlan)
	f, args, dash := parse(t, planFile, "--agents", "3", "--image", "ceiling:dev", "--deadline", "30m", "--ttl", "1h", "--network-policy=false")
	if o, err := f.Options(args, dash); err != nil || o.Deadline != 30*time.Minute || o.TTL != time.Hour || o.NetworkPolicy || o.PlanLoad != 70*time.Second {
		t.Errorf("Options = %+v, %v; want a 30m deadline, a 1h TTL, no network policy, the plan's 1m10s of load (2 steps of 30s after 5s of warm-up)", o, err)
	}
}

func TestFlagsOptionsGenerateToken(t *testing.T) {
	planFile := writeFile(t, "checkout.yaml", testPlan)
	f, args, dash := parse(t, planFile, "--agents", "1", "--image", "ceiling:dev")
	o, err := f.Options(args, dash)
	if b, herr := hex.DecodeString(o.Token); err != nil || herr != nil || len(b) != 32 {
		t.Errorf("Options without --token-file: token %q, %v; want 32 random bytes in hex", o.Token, err)
	}
	if o2, _ := f.Options(args, dash); o2.Token == o.Token {
		t.Errorf("two generated tokens are both %q", o.Token)
	}
	if h := o.Hint(); !strings.Contains(h, `secret/ceiling-token, key "token"`) || !strings.Contains(h, `secret/ceiling-plan, key "plan.yaml"`) || !strings.Contains(h, "kubectl logs -f job/ceiling-coordinator") {
		t.Errorf("Hint() = %q, want where the plan and the token are and how to follow the run", h)
	}
}

func TestFlagsOptionsRefuse(t *testing.T) {
	good := writeFile(t, "plan.yaml", testPlan)
	local := writeFile(t, "local.yaml", testPlan+"monitor:\n  pid: 42\n")
	empty := writeFile(t, "token", "\n")
	withTarget := func(target string) string {
		return writeFile(t, "loopback.yaml", strings.Replace(testPlan, "http://shop.shop.svc:8080", target, 1))
	}
	long := writeFile(t, "long.yaml", strings.Replace(testPlan, "step: 30s", "step: 1h", 1))
	withBody := writeFile(t, "body.yaml", testPlan+"  - request: {method: POST, url: /o, body_file: order.json}\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(withBody), "order.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no plan", []string{"--agents", "2"}, "want one plan file"},
		{"two plans", []string{good, good, "--agents", "2"}, "want one plan file"},
		{"coordinator flags without --", []string{good, "--agents", "2", "extra"}, "want one plan file"},
		{"a missing plan", []string{good + ".missing", "--agents", "2"}, "read plan"},
		{"a bad plan", []string{writeFile(t, "bad.yaml", "load: {rates: [x]}\n"), "--agents", "2"}, "bad.yaml:1"},
		{"a plan that names this machine", []string{local, "--agents", "2"}, "local.yaml:9:8: monitor.pid: names something on this machine"},
		{"an empty token file", []string{good, "--agents", "2", "--token-file", empty}, "is empty"},
		{"a body in a file", []string{withBody, "--agents", "2"}, "scenarios[1].request.body_file: names a file on this machine"},
		{"no agents", []string{good}, "agents: want 1 or more, not 0"},
		{"a bad name", []string{good, "--agents", "2", "--name", "Load_Test"}, `name "Load_Test"`},
		{"one of our flags after --", []string{good, "--agents", "2", "--", "--out", "x.json"}, "coordinator flag --out"},
		{"no image", []string{good, "--agents", "2", "--image", ""}, "image: required"},
		{"a target on 127.0.0.1", []string{withTarget("http://127.0.0.1:3000"), "--agents", "2"}, "loopback.yaml:2:9: target: 127.0.0.1 is a loopback address"},
		{"a target on localhost", []string{withTarget("http://localhost:3000/api"), "--agents", "2"}, "target: localhost is a loopback address"},
		{"a target on ::1", []string{withTarget("http://[::1]:3000"), "--agents", "2"}, "target: ::1 is a loopback address"},
		{"a target on 127.1.2.3", []string{withTarget("https://127.1.2.3"), "--agents", "2"}, "target: 127.1.2.3 is a loopback address"},
		{"a target on 0.0.0.0", []string{withTarget("http://0.0.0.0:3000"), "--agents", "2"}, "target: 0.0.0.0 is a loopback address"},
		{"a request's absolute url on loopback", []string{writeFile(t, "abs.yaml", testPlan+"  - request: {url: 'http://localhost:9000/x'}\n"), "--agents", "2"},
			"scenarios[1].request.url: localhost is a loopback address"},
		{"a websocket url on loopback", []string{writeFile(t, "ws.yaml", testPlan+"  - name: ws\n    websocket: {url: 'ws://127.0.0.1:9000/ws', send: x, ack: {json: id}}\n"), "--agents", "2"},
			"scenarios[1].websocket.url: 127.0.0.1 is a loopback address"},
		{"a prometheus url on loopback", []string{writeFile(t, "prom.yaml", testPlan+"monitor:\n  prometheus: {url: 'http://127.0.0.1:9090/metrics', metrics: [up]}\n"), "--agents", "2"},
			"monitor.prometheus.url: 127.0.0.1 is a loopback address"},
		{"--target on loopback after --", []string{good, "--agents", "2", "--", "--target", "http://127.0.0.1:3000"}, "coordinator flag --target http://127.0.0.1:3000: 127.0.0.1 is a loopback address"},
		{"--url= on loopback after --", []string{good, "--agents", "2", "--", "--url=http://localhost/"}, "coordinator flag --url http://localhost/: localhost is a loopback address"},
		{"a deadline shorter than a run's load", []string{long, "--agents", "2", "--deadline", "2h"}, "deadline 2h0m0s: shorter than the agents' wait (5m0s) and the plan's load (2h0m10s"},
		// 50 repeats of 2 steps of 10m after 5s of warm-up: 16h48m20s.
		{"a deadline shorter than the load the coordinator's flags make", []string{good, "--agents", "2", "--", "--repeat", "50", "--step", "10m"},
			"deadline 2h0m0s: shorter than the agents' wait (5m0s) and the plan's load (16h48m20s with the coordinator's flags)"},
		{"--step= and --rate after --", []string{good, "--agents", "2", "--deadline", "10m", "--", "--rate", "5,10,20", "--step=3m", "--slo", "p99<1s"},
			"the plan's load (9m15s"},
		{"a coordinator flag that the plan refuses", []string{good, "--agents", "2", "--", "--step", "soon"}, "coordinator flags: --step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Contains(tt.args, "--image") {
				tt.args = append([]string{"--image", "ceiling:dev"}, tt.args...)
			}
			f, args, dash := parse(t, tt.args...)
			_, err := f.Options(args, dash)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Options(%q) = %v, want an error saying %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestFlagsRunPrints(t *testing.T) {
	f, args, _ := parse(t, writeFile(t, "plan.yaml", testPlan), "--agents", "2", "--name", "shop", "--image", "ceiling:dev", "--", "--start", "50")
	var stdout, stderr strings.Builder
	res, err := f.Run(t.Context(), args, &stdout, &stderr)
	if res != nil || err != nil || strings.Count(stdout.String(), "\n---\n") != 5 || !strings.Contains(stdout.String(), "- --start\n") {
		t.Errorf("Run = %v, %v with stdout %q; want six objects, the coordinator with --start", res, err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "secret/shop-token") {
		t.Errorf("stderr = %q, want where the token is", stderr.String())
	}

	f, args, _ = parse(t, writeFile(t, "bad.yaml", "load: {rates: [x]}\n"), "--agents", "2", "--apply")
	var in *failure.InputError
	if res, err := f.Run(t.Context(), args, io.Discard, io.Discard); res != nil || !errors.As(err, &in) {
		t.Errorf("Run of a bad plan = %v, %v; want a failure.InputError (exit 2)", res, err)
	}
}

// TestFlagsRunApplies runs --apply through a kubeconfig that names
// apiServer (rest_test.go), not a cluster: the namespace comes from the
// kubeconfig's context, and the result is written to --out.
func TestFlagsRunApplies(t *testing.T) {
	a, _ := newAPIServer(t, resultLog(t, "applied"))
	kubeconfig := writeFile(t, "kubeconfig", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q}}]
users: [{name: test, user: {token: not-a-secret}}]
contexts: [{name: test, context: {cluster: test, user: test, namespace: lt}}]
current-context: test
`, a.url))
	out := filepath.Join(t.TempDir(), "result.json")
	f, args, _ := parse(t, writeFile(t, "plan.yaml", testPlan), "--agents", "2", "--name", "checkout", "--image", "ceiling:dev", "--apply", "--kubeconfig", kubeconfig, "--out", out)
	var stderr strings.Builder
	res, err := f.Run(t.Context(), args, io.Discard, &stderr)
	if err != nil || res == nil || res.Command != "applied" {
		t.Fatalf("Run = %+v, %v (stderr %q); want the result from the log", res, err, stderr.String())
	}
	if written, err := results.Read(out); err != nil || written.Command != "applied" {
		t.Errorf("--out holds %+v, %v; want the result", written, err)
	}
	a.mu.Lock()
	if first := a.seen[0]; first != "POST /api/v1/namespaces/lt/secrets" {
		t.Errorf("the first request was %q, want the plan's Secret in the kubeconfig's namespace", first)
	}
	requests := len(a.seen)
	a.mu.Unlock()

	f, args, _ = parse(t, writeFile(t, "plan.yaml", testPlan), "--agents", "2", "--image", "ceiling:dev", "--apply", "--kubeconfig", kubeconfig, "--out", filepath.Join(out, "missing", "r.json"))
	if res, err := f.Run(t.Context(), args, io.Discard, io.Discard); res != nil || err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("Run with an --out that cannot be written = %v, %v; want it refused", res, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) != requests {
		t.Errorf("Run with an --out that cannot be written asked %q, want nothing created", a.seen[requests:])
	}
}
