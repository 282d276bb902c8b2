package plan

import "time"

// Plan is a whole plan file after defaults and validation.
type Plan struct {
	// File is the path the plan was read from, empty for a plan built from flags.
	File string `yaml:"-"`
	// Name labels the run in reports.
	Name string `yaml:"name"`
	// Target is the base URL that relative request URLs resolve against.
	Target string `yaml:"target"`
	// Load is the shape of the load: model, levels, step lengths.
	Load Load `yaml:"load"`
	// HTTP holds the transport settings shared by all scenarios.
	HTTP HTTP `yaml:"http"`
	// Data names input files: rows of users for the virtual users.
	Data Data `yaml:"data"`
	// Vars are templates evaluated once per iteration, before its requests;
	// later templates read each as .<name>. A var may not use another var.
	Vars map[string]string `yaml:"vars"`
	// Login is a flow each virtual user runs once, before its first
	// iteration; the values it extracts are then read by every scenario.
	Login []Step `yaml:"login"`
	// Scenarios are what iterations do, a weighted mix: each iteration runs
	// one scenario, drawn by weight.
	Scenarios []Scenario `yaml:"scenarios"`
	// TagLimit caps the distinct values kept per tag key; further values
	// are counted together as "other". Zero means the default, 50.
	TagLimit int `yaml:"tag_limit"`
	// Limited lists statuses counted as limited, not failed. Default [429].
	Limited []int `yaml:"limited"`
	// SLO is a comma-separated list of thresholds, e.g. "p99<200ms, errors<1%".
	SLO string `yaml:"slo"`
	// Repeat runs the whole stairs this many times (find: each probe), each
	// repeat with new users and connections; every step's figures are then
	// the medians over the repeats, with their spread. Zero: 1.
	Repeat int `yaml:"repeat"`
	// Control names a scenario whose figures should not move between runs
	// (a static page): ceiling compare refuses to call other changes
	// significant when it moved ("host busy"). Empty: no control.
	Control string `yaml:"control"`
	// Verdict sets the thresholds of the step verdicts.
	Verdict Verdict `yaml:"verdict"`
	// Sinks are mock outside services ceiling runs for the target to call;
	// they record which message ids arrive.
	Sinks []Sink `yaml:"sinks"`
	// Monitor says how to watch the target while it is loaded.
	Monitor Monitor `yaml:"monitor"`
	// Events are done to the target during steps: a pause, a kill, a
	// restart, a rolling deploy, a CPU limit, or a command of the user's.
	Events []Event `yaml:"events"`
	// Outputs are live outputs, as --output takes them: "prometheus=URL"
	// (remote write) or "json=FILE" (JSON lines); docs/outputs.md.
	Outputs []string `yaml:"outputs"`
	// Labels are the tag keys written as labels of live outputs' series
	// (ceiling_tag_iterations_total), their values bounded by tag_limit.
	Labels []string `yaml:"labels"`
	// Strict makes a step whose figures a validity guard doubts (answers
	// after a redirect, bodies like one page's, percentiles shaped by the
	// timeout, repeated ids) INVALID, which fails the run with exit 1. Nil:
	// true, for every command; false opts out (the findings only warn),
	// and the result says so.
	Strict *bool `yaml:"strict"`

	// pos maps field paths ("load.rates[2]") to where they are in File.
	// Nil for a plan built from flags.
	pos map[string]position
	// users holds the rows of Data.Users once Validate has read them;
	// userColumns their column names, in file order.
	users       []map[string]string
	userColumns []string
	// environment lists the environment variables the templates read
	// with env, sorted; set by Validate.
	environment []string
}

// Sink is a mock outside service (a Slack webhook, a payment API) that the
// target calls and that records which message ids arrive.
type Sink struct {
	// Name is how scenarios' delivery names it. Required, unique.
	Name string `yaml:"name"`
	// Listen is the address; the target must be configured to call it.
	// Default 127.0.0.1:0 (a free port, useful only in tests).
	Listen string `yaml:"listen"`
	// Latency is how long it takes to answer: a duration ("50ms"), or a
	// distribution by percentiles ({p50: 40ms, p99: 200ms}).
	Latency SinkLatency `yaml:"latency"`
	// ErrorRate is the share of requests answered 500. Default 0%.
	ErrorRate *Percent `yaml:"error_rate"`
	// Status is the status of a normal answer. Default 200.
	Status int `yaml:"status"`
	// Body is the body of a normal answer. Default {"ok":true}.
	Body string `yaml:"body"`
	// RateLimit answers 429 with Retry-After past rps requests per second
	// per key.
	RateLimit *SinkRateLimit `yaml:"rate_limit"`
	// ID says where the message id is in each received body: json (a gjson
	// path) or regex (exactly one).
	ID Extract `yaml:"id"`
	// Drain is how long to wait, after the load stops, for late deliveries.
	// Default 60s.
	Drain Duration `yaml:"drain"`
}

// SinkLatency is a fixed latency, or a distribution given by percentiles.
type SinkLatency struct {
	// Fixed is a single latency.
	Fixed Duration
	// Percentiles map quantiles (0.5 for p50) to latencies.
	Percentiles map[float64]Duration
}

// SinkRateLimit is a per-key limit.
type SinkRateLimit struct {
	// Per is the key: "{{.json.channel}}" (a path into the JSON body) or
	// "{{.header.X-Channel}}"; empty means one limit for all requests.
	Per string `yaml:"per"`
	// RPS is the requests per second allowed per key.
	RPS float64 `yaml:"rps"`
}

// Delivery names the id an accepted iteration expects to arrive at a sink.
type Delivery struct {
	// Sink is a sink's name.
	Sink string `yaml:"sink"`
	// ID is a template rendering the message id, e.g. "{{.msgid}}".
	ID string `yaml:"id"`
}

// Monitor says how to watch the target: a running process (PID), a command
// ceiling starts and stops itself, a cgroup, and a Prometheus endpoint.
type Monitor struct {
	// PID is a running process to watch, with its children.
	PID int `yaml:"pid"`
	// Command starts the target (through /bin/sh -c) before the run and
	// stops it after (SIGTERM, then SIGKILL after StopGrace). Not with PID.
	Command string `yaml:"command"`
	// Env adds variables to the command's environment.
	Env map[string]string `yaml:"env"`
	// Dir is the command's working folder. Default: the current one.
	Dir string `yaml:"dir"`
	// Ready is a URL that answers once the command's target is ready.
	// Default: the plan's target.
	Ready string `yaml:"ready"`
	// ReadyTimeout bounds the wait for Ready. Default 30s.
	ReadyTimeout Duration `yaml:"ready_timeout"`
	// StopGrace is how long the command may take to stop after SIGTERM.
	// Default 5s.
	StopGrace Duration `yaml:"stop_grace"`
	// Cgroup is a cgroup (v1 or v2) whose CPU and memory are read instead
	// of a process tree's: a container's.
	Cgroup string `yaml:"cgroup"`
	// Prometheus is an endpoint scraped every second.
	Prometheus *Prometheus `yaml:"prometheus"`
}

// Prometheus names an endpoint and the metrics kept from it.
type Prometheus struct {
	// URL serves the Prometheus text format.
	URL string `yaml:"url"`
	// Metrics are the names kept, each optionally with a label filter:
	// queue_depth, http_requests_total{code="500"}.
	Metrics []string `yaml:"metrics"`
}

// Verdict holds the thresholds of the step verdicts (ceiling's defaults below):
// HEALTHY when p95 is below HealthyP95 and errors below MaxErrors;
// OVERLOADED when p95 is above OverloadedP95, or errors above MaxErrors, or
// the achieved rate below MinRate of the target; STRESSED in between.
// Validate fills every threshold and checks HealthyP95 ≤ OverloadedP95.
type Verdict struct {
	// HealthyP95 is the p95 below which a step can be HEALTHY. Zero: the
	// default, DefaultHealthyP95 (100ms).
	HealthyP95 Duration `yaml:"healthy_p95"`
	// OverloadedP95 is the p95 above which a step is OVERLOADED. Zero: the
	// default, DefaultOverloadedP95 (500ms).
	OverloadedP95 Duration `yaml:"overloaded_p95"`
	// MaxErrors is the error share above which a step is OVERLOADED and
	// below which it can be HEALTHY. Nil: DefaultMaxErrors (1%).
	MaxErrors *Percent `yaml:"max_errors"`
	// MinRate is the share of the target rate below which an open-model step
	// is OVERLOADED. Nil: DefaultMinRate (95%).
	MinRate *Percent `yaml:"min_rate"`
}

// Percent is a share written as "1%" or "0.5%", between 0 and 100. Like
// Duration, it is a scalar with its own UnmarshalYAML: a bare number is
// refused, since 1 could mean 1 % or 100 %.
type Percent struct {
	// Value is the percentage: 1 for "1%".
	Value float64
}

// Data names the files a plan reads input from.
type Data struct {
	// Users is a CSV file (a header row of column names, then one row per
	// user) or a JSON array of flat objects; each virtual user gets a row,
	// read in templates as .user.<column>. A relative path is relative to
	// the plan file's folder, or to the working directory for a plan built
	// from flags.
	Users string `yaml:"users"`
}

// Models of load.
const (
	// Open is the arrival-rate model: requests start on a schedule.
	Open = "open"
	// Closed is the virtual-user model: each user waits for its response.
	Closed = "closed"
)

// Arrival processes of the open model.
const (
	// Uniform spaces arrivals evenly.
	Uniform = "uniform"
	// Poisson draws exponential gaps with the step's mean rate.
	Poisson = "poisson"
)

// Load is the shape of the load.
type Load struct {
	// Model is Open or Closed. Default: Closed when VUs are given, else Open.
	Model string `yaml:"model"`
	// Rates are the open model's stairs, in requests per second, one step each.
	Rates []float64 `yaml:"rates"`
	// Ramp is a linear open-model ramp, instead of Rates.
	Ramp *Ramp `yaml:"ramp"`
	// VUs are the closed model's stairs, in virtual users, one step each.
	VUs []int `yaml:"vus"`
	// Think is the closed model's pause between a user's iterations. Zero: none.
	Think Duration `yaml:"think"`
	// Step is the counted length of each step. Default 60s.
	Step Duration `yaml:"step"`
	// Warmup runs before each step at its level and is not counted. Default 5s; "0s" disables it.
	Warmup *Duration `yaml:"warmup"`
	// Arrival is Uniform (default) or Poisson.
	Arrival string `yaml:"arrival"`
	// MaxWorkers caps concurrent open-model exchanges. Zero: rate × timeout,
	// at least 64 and at most 20000. Arrivals past the cap wait and count as late.
	MaxWorkers int `yaml:"max_workers"`
	// Loops is how many event loops send the load, each on a core of its
	// own with its own connections and users, the step split between them
	// (the open model's arrivals striped, the closed model's users shared
	// out). Zero: one per core ceiling may use (GOMAXPROCS). A plan that
	// runs on goroutines (HTTPS, HTTP/2, redirects) ignores it.
	Loops int `yaml:"loops"`
	// Seed seeds Poisson arrivals. Zero: a fixed default, so runs repeat.
	Seed int64 `yaml:"seed"`
	// Each runs the stairs once per scenario, that scenario alone, instead
	// of the weighted mix (the per-endpoint table).
	Each bool `yaml:"each"`
	// Soak, when set, holds the plan's one level (one rate, or one number
	// of users) for Soak.For as one continuous step cut into windows, and
	// says what drifts. Nil: the stairs.
	Soak *Soak `yaml:"soak"`
}

// Soak holds one load for hours and watches what drifts: each window's
// figures are kept, a robust line fitted through each figure, and a
// figure that drifts toward a known limit is projected to it.
type Soak struct {
	// For is how long the load is held, after the warm-up. Required.
	For Duration `yaml:"for"`
	// Window is the length of the windows the soak is cut into. Default
	// 1m; at least 1s. Windows are merged two by two as the soak grows,
	// so that its result stays bounded (docs/soak.md).
	Window Duration `yaml:"window"`
	// Horizon is how far from the soak's start no drift may reach a
	// known limit: a figure DRIFTING toward a limit that its line reaches
	// within Horizon fails the run. Default: DefaultHorizonTimes × For.
	Horizon Duration `yaml:"horizon"`
	// MemoryLimitMB is the memory the target may use, in MiB, which its
	// RSS is projected against. Zero: its cgroup's memory limit, when it
	// has one.
	MemoryLimitMB float64 `yaml:"memory_limit_mb"`
}

// Ramp is a linear change of the arrival rate.
type Ramp struct {
	// From is the rate at the start, per second.
	From float64 `yaml:"from"`
	// To is the rate at the end, per second.
	To float64 `yaml:"to"`
	// Over is how long the ramp lasts; it is counted as one step.
	Over Duration `yaml:"over"`
}

// HTTP holds transport settings.
type HTTP struct {
	// Timeout bounds one whole exchange. Default 10s.
	Timeout Duration `yaml:"timeout"`
	// HTTP2 uses HTTP/2: h2 over TLS for https, h2c for http.
	HTTP2 bool `yaml:"http2"`
	// Insecure skips TLS certificate verification.
	Insecure bool `yaml:"insecure"`
	// FollowRedirects follows up to 10 redirects; the final status is classified.
	FollowRedirects bool `yaml:"follow_redirects"`
	// ObeyRetryAfter makes a closed-model virtual user answered with a
	// limited status wait the Retry-After it was given (at most a minute)
	// before its next iteration. The open model cannot wait: its arrivals
	// keep their schedule. Default false: Retry-After is recorded, not obeyed.
	ObeyRetryAfter bool `yaml:"obey_retry_after"`
	// Headers are sent with every request; a scenario's headers override them.
	Headers map[string]string `yaml:"headers"`
	// MaxConnections caps open connections to the target. Each open-model
	// worker and each closed-model user holds its own keep-alive connection,
	// so in the open model this caps the workers (arrivals past it wait and
	// count as late), and in the closed model it must not be below the
	// users. Zero: one per worker, no cap beyond load.max_workers.
	MaxConnections int `yaml:"max_connections"`
	// MaxBodyBytes caps a response body; a larger one is a protocol failure. Zero: 16 MiB.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// SecretHeaders names headers whose values are secret, beyond those
	// ceiling always keeps out of what it writes (Authorization, Cookie, API
	// keys: docs/security.md).
	SecretHeaders []string `yaml:"secret_headers"`
}

// Scenario is what one iteration does: a single request, a flow of steps,
// or a frame over a held WebSocket connection (exactly one of the three).
type Scenario struct {
	// Name labels the scenario in reports. Default: "METHOD path" of the
	// request, or of a flow's first step; "ws " and the url as written for
	// a WebSocket scenario. Names are unique.
	Name string `yaml:"name"`
	// Weight is the scenario's share of iterations: a positive number,
	// relative to the other scenarios' weights. Default 1.
	Weight float64 `yaml:"weight"`
	// Request is what to send, for a single-request scenario.
	Request Request `yaml:"request"`
	// Expect says which responses count as OK, for a single-request
	// scenario (a flow's checks are on its steps).
	Expect Expect `yaml:"expect"`
	// Extract names values taken from the response, for a single-request
	// scenario (a flow extracts on its steps).
	Extract map[string]Extract `yaml:"extract"`
	// Steps is a flow: requests sent in order within one iteration. A failed
	// step ends the iteration.
	Steps []Step `yaml:"steps"`
	// Delivery says which id an accepted iteration expects to arrive at a
	// sink.
	Delivery *Delivery `yaml:"delivery"`
	// WebSocket makes the scenario send frames over held WebSocket
	// connections and time each to its matching ack (instead of request or
	// steps).
	WebSocket *WebSocket `yaml:"websocket"`
	// Tags break the scenario's figures down by value, e.g.
	// {site: "{{.user.site}}"}; values are templates.
	Tags map[string]string `yaml:"tags"`
}

// WebSocket is a scenario of frames over held WebSocket connections.
type WebSocket struct {
	// URL is a ws:// or wss:// URL, or a path appended to the plan's target
	// (http becomes ws, https wss). A template, rendered when a socket opens.
	URL string `yaml:"url"`
	// Connections is, in the open model, how many sockets are opened before
	// the first step and held for the whole run; frames are spread over
	// them. In the closed model each virtual user holds its own socket and
	// this is ignored. Default 1.
	Connections int `yaml:"connections"`
	// Send is the frame an iteration sends (a template, rendered per frame).
	// Empty: an idle soak, holding the sockets and sending nothing.
	Send string `yaml:"send"`
	// Ack says how to recognise the frame that acknowledges a sent one.
	// Required with Send.
	Ack *Ack `yaml:"ack"`
	// Reject says how to recognise the frame that rejects a sent one by
	// design (a flood brake, a rate limit): the same forms as Ack, whose
	// key it carries where Reject says. A rejected frame counts as limited,
	// with its latency, not as a failure. Optional; only with Send.
	Reject *Ack `yaml:"reject"`
	// AckTimeout is how long a frame may wait for its ack before it is a
	// ws_no_ack failure. Default 10s.
	AckTimeout Duration `yaml:"ack_timeout"`
	// Headers are sent with the opening handshake (templates).
	Headers map[string]string `yaml:"headers"`
	// Subprotocols are offered in the handshake.
	Subprotocols []string `yaml:"subprotocols"`
	// MaxFrameBytes caps a received frame; a larger one closes the socket
	// and is a protocol failure. Default 1 MiB.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
}

// Ack matches a received frame to a sent one: exactly one field is set.
// As a websocket's ack it is taken from both the sent frame (its key) and
// received frames; as its reject, from received frames only, whose value
// there is compared with the sent frame's ack key. A JSON string is
// compared by its value, so a JSON ack and a regex reject agree.
type Ack struct {
	// JSON is a gjson path (e.g. "clientId"): the ack is the received frame
	// whose value at the path equals the sent frame's value at the path.
	JSON string `yaml:"json"`
	// Regex is a regular expression whose first group (or whole match) is
	// taken from the sent frame and from received frames; equal values
	// match.
	Regex string `yaml:"regex"`
}

// Step is one request of a flow.
type Step struct {
	// Name labels the step in messages. Default: "METHOD path".
	Name string `yaml:"name"`
	// Request is what to send.
	Request Request `yaml:"request"`
	// Expect says which responses count as OK.
	Expect Expect `yaml:"expect"`
	// Extract names values taken from the response, for later steps.
	Extract map[string]Extract `yaml:"extract"`
}

// Extract says where a value is in a response; exactly one field is set.
type Extract struct {
	// JSON is a gjson path into the body, e.g. "data.token".
	JSON string `yaml:"json"`
	// Header is a response header name.
	Header string `yaml:"header"`
	// Cookie is the name of a cookie the response sets.
	Cookie string `yaml:"cookie"`
	// Regex is a regular expression over the body; its first group (or the
	// whole match when it has none) is the value.
	Regex string `yaml:"regex"`
}

// Request is one HTTP request.
type Request struct {
	// Method is the HTTP method. Default GET.
	Method string `yaml:"method"`
	// URL is absolute, or relative to Plan.Target.
	URL string `yaml:"url"`
	// Headers are added to (and override) the plan's http.headers.
	Headers map[string]string `yaml:"headers"`
	// Body is sent as is (a template).
	Body string `yaml:"body"`
	// JSON is a body built from YAML: maps, lists and scalars, with string
	// leaves as templates. It sets Content-Type: application/json unless a
	// header says otherwise. Not with Body.
	JSON any `yaml:"json"`
	// BodyFile names a file whose bytes are the body, sent as they are
	// (not a template), relative to the plan's folder; at most
	// MaxBodyFileBytes. Not with Body or JSON.
	BodyFile string `yaml:"body_file"`
}

// Expect says which responses count as OK. A response that fails any check
// is a failure of class check.
type Expect struct {
	// Status lists the accepted statuses. Empty: any 2xx.
	Status []int `yaml:"status"`
	// BodyContains is a substring the body must contain.
	BodyContains string `yaml:"body_contains"`
	// BodyRegex is a regular expression the body must match.
	BodyRegex string `yaml:"body_regex"`
	// JSON maps gjson paths to the values they must hold (compared as JSON
	// scalars: "ok", 200, true).
	JSON map[string]any `yaml:"json"`
	// Header maps response header names to the values they must equal.
	Header map[string]string `yaml:"header"`
}

// Duration is a time.Duration written as a Go duration string ("250ms", "1m").
type Duration struct {
	time.Duration
}
