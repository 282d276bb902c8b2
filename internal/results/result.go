package results

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/inputfile"
	"github.com/ceiling-dev/ceiling/internal/metrics"
)

// Schema names this version of the format.
const Schema = "ceiling.result/v1"

// Result is a whole run.
type Result struct {
	Schema  string `json:"schema"`
	Command string `json:"command"`
	Name    string `json:"name,omitempty"`
	Target  string `json:"target,omitempty"`
	// Control is the plan's control scenario: a static page whose figures
	// should not move between runs (compare checks it first). Empty: none.
	Control string `json:"control,omitempty"`
	Host    Host   `json:"host"`
	// Agents are the machines that ran the load, when it was split over
	// several (a coordinator's run, a merge); empty when it ran here.
	Agents []Agent `json:"agents,omitempty"`
	// Segment says this run was one share of a load split over several
	// generators (--segment), for `ceiling merge`.
	Segment *Segment `json:"segment,omitempty"`
	// RunID names the run in live outputs' labels (docs/outputs.md).
	RunID       string     `json:"run_id,omitempty"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	Interrupted bool       `json:"interrupted"`
	// Unfinished is true in every write before the run's last: a file that
	// still says so was left by a ceiling that was killed (or aborted by a
	// second Ctrl-C) mid-run. Such a result never passed.
	Unfinished bool `json:"unfinished,omitempty"`
	// Passed is Outcome's status read as one bit: true only when it is
	// StatusPassed.
	Passed bool `json:"passed"`
	// Outcome is the run's answer, with every reason it did not pass
	// (decide).
	Outcome  Outcome  `json:"outcome"`
	Warnings []string `json:"warnings"`
	Steps    []Step   `json:"steps"`
	// Preflight is what ceiling sent before the first step to see that the
	// target answers; nil when it sent nothing (websocket scenarios only,
	// or agents, whose coordinator does not send it).
	Preflight *Preflight `json:"preflight,omitempty"`
	// Events are the plan's events that happened during the run (a pause,
	// a restart...), in the order they began, with what each cost
	// (CostEvents).
	Events []Event `json:"events,omitempty"`
	// DuplicateIDs lists id values that repeated within the run, by source.
	DuplicateIDs []DuplicateID `json:"duplicate_ids"`
	Edge         *Edge         `json:"edge"`
	// Search describes the find that produced Edge; nil for a run.
	Search *Search `json:"search,omitempty"`
	// Soak is a soak's windows, trends, projections and episodes
	// (SoakSchema); nil for stairs and searches.
	Soak *Soak `json:"soak,omitempty"`
	// Delivery sums the run\'s delivery, after the drain; DeliverySeries
	// has one point per second.
	Delivery       *Delivery       `json:"delivery,omitempty"`
	DeliverySeries []DeliveryPoint `json:"delivery_series,omitempty"`
	// Invalid lists what makes the run\'s figures untrustworthy (validity
	// guards); a strict run fails when it is not empty.
	Invalid    []string    `json:"invalid"`
	Thresholds []Threshold `json:"thresholds"`

	noSamples []string // thresholds evaluated on no samples, by Evaluate, for Judge
}

// Preflight counts the requests sent before the first step (the first
// scenario's first request, and each other scenario's while they are
// refused): the target received them, and no step counts them. With a
// login, the first is the login's: the target sees one login more than
// the users made.
type Preflight struct {
	Requests int  `json:"requests"`
	Login    bool `json:"login,omitempty"`
}

// Segment is a --segment run's share and what its merge needs: the
// plan's fingerprint (segments of one plan share it), and how to judge
// the merged steps (the SLO and the verdict rules).
type Segment struct {
	// I counts from 1: segment I of N.
	I      int    `json:"i"`
	N      int    `json:"n"`
	Plan   string `json:"plan"`
	SLO    string `json:"slo,omitempty"`
	Rules  Rules  `json:"rules"`
	Strict bool   `json:"strict,omitempty"`
}

// Agent is one machine of a distributed run: its address, ceiling's
// version on it, and its clock's offset from the coordinator's (measured
// by a round trip; positive when the agent's clock is ahead), with the
// round trip's time, which bounds the offset's error.
type Agent struct {
	Addr          string  `json:"addr"`
	Version       string  `json:"version"`
	Host          string  `json:"host,omitempty"`
	CPUs          int     `json:"cpus,omitempty"`
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	RoundTripMS   float64 `json:"round_trip_ms"`
}

// Host describes where the run happened.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	CPUs     int    `json:"cpus"`
	Version  string `json:"ceiling_version"`
}

// DuplicateID counts the repeats of one source of ids (a var named ...id or
// ...key, or an Idempotency-Key / X-Request-Id header) not made unique by
// uuid or seq.
type DuplicateID struct {
	Source  string `json:"source"`
	Count   int64  `json:"count"`
	Example string `json:"example"`
}

// Search is what ceiling find searched and answered.
type Search struct {
	Start     float64 `json:"start"`
	Max       float64 `json:"max,omitempty"`
	Precision float64 `json:"precision"`
	// Outcome is "edge", "start_fails", "no_failure", "generator_limited",
	// "exhausted", or "unfinished" (interrupted).
	Outcome string `json:"outcome"`
	// SLO is the criteria the steps were judged by, as the plan wrote them;
	// empty: by their verdicts alone.
	SLO string `json:"slo,omitempty"`
	// Users says the levels are numbers of users (the closed model), not
	// rates per second.
	Users bool `json:"users,omitempty"`
	// PassedLevel is the highest level that passed (the edge, when one was
	// found), 0 if none did; FailedLevel the lowest that failed, 0 if none
	// did.
	PassedLevel float64 `json:"passed_level,omitempty"`
	FailedLevel float64 `json:"failed_level,omitempty"`
	// Probes counts the steps the search ran, and LastLevel is the level of
	// the last of them.
	Probes    int     `json:"probes"`
	LastLevel float64 `json:"last_level,omitempty"`
	// Answer is the one-line answer as results written before the facts
	// above were kept carry it; a search leaves it empty, and
	// report.FindAnswer phrases the answer from the facts.
	Answer string `json:"answer,omitempty"`
}

// DeliveryPoint is one second of deliveries: first arrivals, and ids
// accepted but not yet delivered.
type DeliveryPoint struct {
	T       float64 `json:"t_s"`
	Arrived int64   `json:"arrived"`
	Backlog int64   `json:"backlog"`
}

// Edge is the highest rate that met the SLO (filled by find).
type Edge struct {
	// Rate is the edge rate per second (open model).
	Rate float64 `json:"rate,omitempty"`
	// VUs is the edge number of users (closed model).
	VUs int `json:"vus,omitempty"`
	// Step is the index of the step that confirmed it.
	Step int `json:"step"`
}

// Threshold is one SLO term evaluated over the whole run.
type Threshold struct {
	Expr  string  `json:"expr"`
	Value float64 `json:"value"`
	OK    bool    `json:"ok"`
	// AtLeast says Value is a lower bound: a delivery percentile that the
	// ids still missing reach, each counted at its wait so far.
	AtLeast bool `json:"at_least,omitempty"`
}

// Step is one step as result.json holds it: its figures and what is said
// of them (Figures, whose fields come first in the file), then which
// generators made it when several did. Rates are per second; error_rate
// is a fraction in [0, 1]; latencies are in milliseconds.
type Step struct {
	Figures
	// Agents counts the generators whose shares were merged into this
	// step (agents, segments; 0: one generator); Parts lists each one's.
	Agents int    `json:"agents,omitempty"`
	Parts  []Part `json:"parts,omitempty"`
	// Lost says which agent was lost during the step, and when: the step
	// is INVALID, its figures short of that agent's share. TargetRate and
	// VUs stay the step's planned load; LostParts says which shares of it
	// are missing from the figures.
	Lost      string     `json:"agent_lost,omitempty"`
	LostParts []LostPart `json:"lost_parts,omitempty"`
}

// LostPart is the share of a step that a lost generator was running: it
// is not in the step's figures (which are the other generators' only).
type LostPart struct {
	// Agent is the generator's address.
	Agent string `json:"agent"`
	// Segment is its share of the load, "i/N" (segment i of N).
	Segment string `json:"segment"`
	// Share is the fraction of the step's load it was running, in (0, 1].
	Share float64 `json:"share"`
	// TargetRate (open model, per second) or VUs (closed model) is that
	// share of the step's planned load.
	TargetRate float64 `json:"target_rate,omitempty"`
	VUs        int     `json:"vus,omitempty"`
	// AfterS is when it stopped answering, in seconds from the step's
	// start (its warm-up included).
	AfterS float64 `json:"after_s"`
}

// Breakdown is the figures of one scenario, or of one tag value, counted in
// iterations: an iteration of a flow is all its steps, and it failed if one
// of them did.
type Breakdown struct {
	Name string `json:"name,omitempty"`
	// WebSocket marks a websocket scenario: its bodies are the frames that
	// answered (acks), alike by design.
	WebSocket    bool             `json:"websocket,omitempty"`
	Completed    int64            `json:"completed"`
	OK           int64            `json:"ok"`
	Failed       int64            `json:"failed"`
	Limited      int64            `json:"limited"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	LatencyMS    metrics.Latency  `json:"latency_ms"`
	AvgBodyBytes float64          `json:"avg_body_bytes"`
	Histogram    string           `json:"histogram,omitempty"`
	// Repeat is the scenario's spread over the run's repeats (--repeat N > 1).
	Repeat *Repeat `json:"repeat,omitempty"`
}

// Logins is what the virtual users' login flows did during a step, warm-up
// included: apart from the step's figures, which are its scenarios' only.
// count is the attempts (ok + failed); retried those of users whose login
// had failed before, so count − retried users tried for the first time;
// latency_ms runs from an attempt's intended start to the end of its last
// request. skipped counts the open model's arrivals of the window whose
// scenario did not run for want of a login, not_logged_in the step's users
// (open model: workers) without a login at its end, logged_in_earlier
// those that had logged in during an earlier step (users live across
// steps) and so made no attempt in this one.
type Logins struct {
	Count           int64            `json:"count"`
	OK              int64            `json:"ok"`
	Failed          int64            `json:"failed"`
	ByClass         map[string]int64 `json:"by_class"`
	Retried         int64            `json:"retried"`
	Skipped         int64            `json:"skipped"`
	NotLoggedIn     int64            `json:"not_logged_in"`
	LoggedInEarlier int64            `json:"logged_in_earlier"`
	LatencyMS       metrics.Latency  `json:"latency_ms"`
	Histogram       string           `json:"histogram,omitempty"`
}

// Earlier reports whether the step made no login because every user it
// ran had logged in during an earlier step: its logins have no figures of
// their own, and that is not a failure.
func (l *Logins) Earlier() bool {
	return l != nil && l.Count == 0 && l.LoggedInEarlier > 0 && l.NotLoggedIn == 0
}

// Delivery is what a step's (or the run's) accepted iterations delivered
// to the plan's sinks: ids expected, delivered, lost or undelivered (the
// first 100 missing listed), duplicated, and the send→delivery latency;
// drain_s is how long after the load stopped the last expected id arrived
// (run level).
type Delivery struct {
	Expected  int64 `json:"expected"`
	Delivered int64 `json:"delivered"`
	// Lost counts ids proven lost: still missing after a drain that saw no
	// arrival for its quiet period.
	Lost int64 `json:"lost"`
	// Undelivered counts ids missing but not proven lost: in flight during
	// the run, or still coming when the drain ended (drain_complete false).
	Undelivered int64 `json:"undelivered"`
	Duplicates  int64 `json:"duplicates"`
	Rejected    int64 `json:"rejected"`
	// LostIDs lists the first 100 missing ids, lost or undelivered, in the
	// order they were sent.
	LostIDs []string `json:"lost_ids"`
	// Missed counts arrivals the sinks recorded but could not keep for
	// matching (their bounds); when not zero, every figure is incomplete.
	Missed int64 `json:"missed,omitempty"`
	// LatencyMS is the send → delivery latency, each missing id counted at
	// its wait so far (until the drain's end, or the step's while it
	// runs): a percentile the missing ids reach is a lower bound.
	LatencyMS metrics.Latency `json:"latency_ms"`
	// LatencyUpperMS, when ids are missing, is each percentile's upper
	// bound (p50 to p999): its value if no missing id ever arrived. A
	// percentile equal to its bound is exact; one without a bound (its rank
	// falls among the missing ids) is known only to be at least
	// latency_ms's.
	LatencyUpperMS map[string]float64 `json:"latency_upper_ms,omitempty"`
	DrainS         float64            `json:"drain_s,omitempty"`
	// DrainComplete (run level) is false when the drain ended while
	// deliveries were still arriving: the ids missing then are undelivered,
	// not lost.
	DrainComplete *bool `json:"drain_complete,omitempty"`
	// AtStepEnd is how many had been delivered when the step ended: what
	// the step's delivered>= thresholds are judged on.
	AtStepEnd *int64 `json:"delivered_at_step_end,omitempty"`
	// BacklogStart and BacklogEnd count the accepted ids not yet delivered
	// at the start and the end of the step's window, every step's and
	// warm-up's included: the queue behind the target. A backlog that grew
	// through the window means the target accepted faster than it
	// delivered (the step's verdict says so).
	BacklogStart *int64 `json:"backlog_at_start,omitempty"`
	BacklogEnd   *int64 `json:"backlog_at_end,omitempty"`
	// BacklogSamples is the same backlog at BacklogSampleCount instants
	// evenly spread over the window, its start and end included: the
	// series whose trend, against its own scatter, says whether the
	// delivery fell behind (FellBehind). Absent in results from before it
	// was kept, and for repeats whose samples differ in number.
	BacklogSamples []int64 `json:"backlog_samples,omitempty"`
	// BacklogWaitS is, at the same instants, the seconds the ids of the
	// backlog had waited, added: divided by BacklogSamples, their mean
	// wait, which stays flat while the target keeps up, however the rate
	// it accepts moves the backlog. Absent where BacklogSamples is, and in
	// results from before it was kept.
	BacklogWaitS []float64 `json:"backlog_wait_s,omitempty"`
}

// Missing counts the expected ids not delivered (lost or undelivered).
func (d *Delivery) Missing() int64 { return max(d.Expected-d.Delivered, 0) }

// LatencyBounds returns latency_ms's figures as an SLO term reads them:
// the values (lower bounds where ids are missing) and, when ids are
// missing, their upper bounds (+Inf where there is none; max and mean
// have none).
func (d *Delivery) LatencyBounds() (metrics.Latency, *metrics.Latency) {
	if d.Missing() == 0 {
		return d.LatencyMS, nil
	}
	inf := math.Inf(1)
	bound := func(name string) float64 {
		if v, ok := d.LatencyUpperMS[name]; ok {
			return v
		}
		return inf
	}
	return d.LatencyMS, &metrics.Latency{
		P50: bound("p50"), P90: bound("p90"), P95: bound("p95"), P99: bound("p99"), P999: bound("p999"),
		Max: inf, Mean: inf,
	}
}

// AtLeast reports whether latency_ms's figure name (p50 … p999, max,
// mean) is only a lower bound: ids are missing and it is not known to be
// exact.
func (d *Delivery) AtLeast(name string) bool {
	if d.Missing() == 0 {
		return false
	}
	v, ok := d.LatencyUpperMS[name]
	if !ok {
		return true
	}
	lower := map[string]float64{"p50": d.LatencyMS.P50, "p90": d.LatencyMS.P90, "p95": d.LatencyMS.P95, "p99": d.LatencyMS.P99, "p999": d.LatencyMS.P999}
	return v > lower[name]
}

// Generator is what ceiling itself used during a step.
type Generator struct {
	// CPUPct is ceiling's CPU use, in percent of one core (2 cores busy = 200).
	CPUPct float64 `json:"cpu_pct"`
	// CPUs is how many cores ceiling could use (GOMAXPROCS).
	CPUs int `json:"cpus"`
	// GCPauseMS is the total of ceiling's garbage-collection pauses.
	GCPauseMS float64 `json:"gc_pause_ms"`
	// Engine is how the step's exchanges were made: "loop" (one event
	// loop sent and read them all, docs/measurements.md) or "goroutines"
	// (a goroutine per worker or user); "mixed" when merged parts differ.
	Engine string `json:"engine,omitempty"`
	// FDLimit is the most file descriptors ceiling's process could hold
	// open (its soft RLIMIT_NOFILE), 0 when unknown or unlimited (Windows).
	// ConnLimit is the most connections that left the step's workers, each
	// holding one: the limit less the descriptors already in use and a
	// reserve kept for result files; set only when the step reached it, its
	// arrivals then waiting for a connection to come free. Both are one
	// generator's: absent from a merged step, whose parts each say theirs
	// in their reason.
	FDLimit   int `json:"fd_limit,omitempty"`
	ConnLimit int `json:"conn_limit,omitempty"`
	// HostOtherPct is the CPU the machine's other processes used while the
	// step ran (not ceiling, nor the watched target), and HostStealPct
	// what the hypervisor took from its virtual CPUs, both in percent of
	// one core, from /proc/stat: a run on a busy host is known as such
	// (compare cannot tell a slower target from a busier machine). Absent
	// where not measured (not Linux) and from a merged step (each part ran
	// on its own machine).
	HostOtherPct *float64 `json:"host_other_cpu_pct,omitempty"`
	HostStealPct *float64 `json:"host_steal_pct,omitempty"`
	// PeakRSSMB is the most resident memory ceiling's process had held by
	// the step's end, and BytesPerUser what its heap grew by for each user
	// the step made (when it made at least 100; absent otherwise): the cost
	// of a virtual user. MemoryBudgetMB is set when the open model stopped
	// making users at its memory budget, the heap then HeapAtLimitMB: its
	// late arrivals waited for a user to come free. One generator's, absent
	// from a merged step.
	// Loops counts the event loops the step ran on (each a lane of its
	// load, on an OS thread of its own), and LoopCPUPct is each one's CPU
	// in percent of one core: the one near 100 is the bottleneck. Absent
	// when it ran on goroutines, and from a merged step.
	Loops      int       `json:"loops,omitempty"`
	LoopCPUPct []float64 `json:"loop_cpu_pct,omitempty"`
	// LoopExchanges counts the exchanges each loop ended (its warm-up and
	// drain included): how evenly they shared the step.
	LoopExchanges  []int64 `json:"loop_exchanges,omitempty"`
	PeakRSSMB      float64 `json:"peak_rss_mb,omitempty"`
	BytesPerUser   float64 `json:"bytes_per_user,omitempty"`
	MemoryBudgetMB float64 `json:"memory_budget_mb,omitempty"`
	HeapAtLimitMB  float64 `json:"heap_at_limit_mb,omitempty"`
}

// Target is what the monitored target did during a step's window.
type Target struct {
	// CPUPct is its CPU use in percent of one core (2 busy cores = 200).
	CPUPct float64 `json:"cpu_pct"`
	// CPULimitPct is the most it could use (cores × 100, or its cgroup's quota).
	CPULimitPct float64 `json:"cpu_limit_pct,omitempty"`
	// RSSMB is its resident memory at the window's end; RSSMaxMB the peak.
	RSSMB    float64 `json:"rss_mb"`
	RSSMaxMB float64 `json:"rss_max_mb"`
	// Threads and FDs are counts at the window's end (0 when unknown).
	Threads int `json:"threads,omitempty"`
	FDs     int `json:"fds,omitempty"`
	// Metrics are the Prometheus metrics kept, by name{labels}.
	Metrics map[string]Metric `json:"metrics,omitempty"`
	// Exited is true when the target had exited by the window's end.
	Exited bool `json:"exited,omitempty"`
	// Died says how a command target ceiling started had ended on its own
	// by the window's end ("exited with status 1", "killed by SIGKILL"):
	// a step without events is ended there and the run stops. Empty when
	// it had not.
	Died string `json:"died,omitempty"`
	// Samples counts the readings in the window; 0 means nothing measured.
	Samples int `json:"samples"`
	// SourceSamples counts the readings of the process or cgroup: 0 means
	// CPU, RSS, threads and FDs were not measured (only metrics scraped).
	SourceSamples int `json:"source_samples"`
	// Scrapes counts the metrics endpoint's scrapes in the window,
	// ScrapeErrors those that failed, and ScrapeError is the last failure.
	Scrapes      int    `json:"scrapes,omitempty"`
	ScrapeErrors int    `json:"scrape_errors,omitempty"`
	ScrapeError  string `json:"scrape_error,omitempty"`
}

// MarshalJSON writes t as result.json keeps it: CPU and memory only when
// they were measured (SourceSamples, or a result from before it whose
// figures say so), absent when only a metrics endpoint was watched, so
// that nothing reads an unmeasured figure as 0 % or 0 MB.
func (t Target) MarshalJSON() ([]byte, error) {
	type plain Target // without this method
	out := struct {
		plain
		CPUPct   *float64 `json:"cpu_pct,omitempty"`
		RSSMB    *float64 `json:"rss_mb,omitempty"`
		RSSMaxMB *float64 `json:"rss_max_mb,omitempty"`
	}{plain: plain(t)}
	if t.Measured() {
		out.CPUPct, out.RSSMB, out.RSSMaxMB = &t.CPUPct, &t.RSSMB, &t.RSSMaxMB
	}
	return json.Marshal(out)
}

// Measured reports whether t holds readings of the target's process or
// cgroup (source_samples), rather than only of its metrics endpoint:
// showing an endpoint's figures as CPU and memory would claim "0% 0 MB"
// measured. A result written before source_samples existed counts a
// process or cgroup as read when it had memory (or had exited).
func (t *Target) Measured() bool {
	switch {
	case t == nil:
		return false
	case t.SourceSamples > 0:
		return true
	}
	return t.Samples > 0 && (t.CPUPct != 0 || t.RSSMB != 0 || t.RSSMaxMB != 0 || t.Threads != 0 || t.FDs != 0 || t.Exited)
}

// Metric is one Prometheus series over a step's window: gauges give last,
// max and mean; counters their rate per second.
type Metric struct {
	Last    float64 `json:"last"`
	Max     float64 `json:"max"`
	Mean    float64 `json:"mean"`
	Rate    float64 `json:"rate,omitempty"`
	Counter bool    `json:"counter,omitempty"`
}

// Sockets is what happened to a step's WebSocket sockets: how many were
// open at its end, and what opened, failed to open, dropped or brought an
// ack nobody waited for during it; connect_ms summarises every handshake
// of the run so far.
type Sockets struct {
	// Wanted is how many sockets the plan holds open (open model; 0 in the
	// closed model, where each user holds its own).
	Wanted      int64           `json:"wanted,omitempty"`
	Open        int64           `json:"open"`
	Opened      int64           `json:"opened"`
	Failed      int64           `json:"failed"`
	Dropped     int64           `json:"dropped"`
	UnknownAcks int64           `json:"unknown_acks"`
	ConnectMS   metrics.Latency `json:"connect_ms"`
}

// Public and Private are the modes a result is written with: private when
// it holds values from a data file (ids, tags), which may be personal.
const (
	Public  os.FileMode = 0o644
	Private os.FileMode = 0o600
)

// Write stores r at path atomically with mode perm (see WriteFile).
func Write(path string, r *Result, perm os.FileMode) error {
	var w Writer
	return w.Write(path, r, perm)
}

// Writer writes a result again and again, as a soak does after every
// window, through buffers it keeps: a write leaves no garbage the size of
// the file, and a soak's windows go to the file one at a time, so its
// buffers hold the result less its windows and one window, not the file:
// ceiling's memory does not rise with the file. Buffers past keepBytes (a
// result of long per-second series) are let go after the write rather than
// held for the run. Its zero value is ready; writes from several
// goroutines take turns.
type Writer struct {
	mu   sync.Mutex
	buf  bytes.Buffer // the result less its soak's windows
	enc  *json.Encoder
	wbuf bytes.Buffer // one window
	wenc *json.Encoder
	out  *bufio.Writer
}

// Write stores r at path atomically with mode perm (see WriteFile): the
// bytes json.MarshalIndent(r, "", "  ") gives, and a newline.
func (w *Writer) Write(path string, r *Result, perm os.FileMode) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetIndent("", "  ")
	}
	var windows *Soak // the soak whose windows go one at a time
	if r.Soak != nil && r.Soak.WindowCount() > 0 {
		c, k := *r, *r.Soak
		windows, k.Windows, k.file, c.Soak = r.Soak, nil, nil, &k
		r = &c
	}
	w.buf.Reset()
	if err := w.enc.Encode(r); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	head, tail := w.buf.Bytes(), []byte(nil)
	if windows != nil {
		i := bytes.Index(head, windowsNull)
		if i < 0 || bytes.Contains(head[i+1:], windowsNull) {
			return fmt.Errorf("encode result: the soak's windows are not where they belong")
		}
		head, tail = head[:i+len(windowsNull)-len("null")], head[i+len(windowsNull):]
	}
	err := writeFile(path, perm, func(f io.Writer) error {
		if w.out == nil {
			w.out = bufio.NewWriterSize(f, 64<<10)
		}
		w.out.Reset(f)
		w.out.Write(head)
		if windows != nil {
			if err := w.windows(windows); err != nil {
				return err
			}
			w.out.Write(tail)
		}
		return w.out.Flush()
	})
	if w.out != nil {
		w.out.Reset(nil) // keeps its buffer, not the file
	}
	if w.buf.Cap() > keepBytes || w.wbuf.Cap() > keepBytes {
		w.enc, w.buf, w.wenc, w.wbuf = nil, bytes.Buffer{}, nil, bytes.Buffer{}
	}
	if err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// windowsNull is where a soak without its windows has them in the
// encoded result: the soak's field, at its depth.
var windowsNull = []byte("\n    \"windows\": null")

// windows writes a soak's windows as json.MarshalIndent indents them at
// their depth in the result, one at a time: those in memory encoded,
// those in its file (a soak under way) copied from it and indented.
func (w *Writer) windows(k *Soak) error {
	const indent = "      "
	if w.wenc == nil {
		w.wenc = json.NewEncoder(&w.wbuf)
		w.wenc.SetIndent(indent, "  ")
	}
	w.out.WriteByte('[')
	for i := range k.WindowCount() {
		w.wbuf.Reset()
		if k.file != nil {
			raw, err := k.file.Raw(i)
			if err == nil {
				err = json.Indent(&w.wbuf, raw, indent, "  ")
			}
			if err != nil {
				return fmt.Errorf("window %d: %w", i, err)
			}
		} else if err := w.wenc.Encode(&k.Windows[i]); err != nil {
			return fmt.Errorf("encode window %d: %w", i, err)
		}
		if i > 0 {
			w.out.WriteByte(',')
		}
		w.out.WriteString("\n" + indent)
		w.out.Write(bytes.TrimSuffix(w.wbuf.Bytes(), []byte("\n")))
	}
	w.out.WriteString("\n    ]")
	return nil
}

// keepBytes is the largest buffer a Writer keeps between writes.
const keepBytes = 16 << 20

// WriteFile stores data at path atomically with mode perm: a temporary
// file in the same folder, synced, then renamed over path, so that a
// reader sees the old file or the new one, never a part. When the process
// has no file descriptor left (every one a connection), it writes with
// one of those Reserve set aside.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, perm, func(f io.Writer) error {
		_, err := f.Write(data)
		return err
	})
}

// writeFile is WriteFile with the data written by write.
func writeFile(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, refill, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if refill {
		defer Reserve()
	}
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(perm) // CreateTemp makes it private
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// MaxResultBytes bounds a result file that Read reads: a long soak's
// result, with its series of every second, is a few MiB.
const MaxResultBytes = 64 << 20

// Read loads a result file of at most MaxResultBytes: a regular file, a
// pipe (compare base.json <(curl …)) or a device, never read past the
// limit.
func Read(path string) (*Result, error) {
	data, err := inputfile.Read(context.Background(), path, MaxResultBytes)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	r, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	return r, nil
}

// Decode reads a result from the bytes of a result file, with Read's
// checks.
func Decode(data []byte) (*Result, error) {
	r, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	return r, nil
}

func decode(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("schema %q, want %q", r.Schema, Schema)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Writable fails when a file cannot be created where a path says (a
// missing folder, no permission), so that a run stops before its first
// step rather than after its last. Empty paths are skipped.
func Writable(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".check-*")
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", p, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}
