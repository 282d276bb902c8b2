package results

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
	"github.com/ceiling-dev/ceiling/internal/trend"
)

// Verdicts of a step.
const (
	Healthy          = "HEALTHY"
	Stressed         = "STRESSED"
	Overloaded       = "OVERLOADED"
	GeneratorLimited = "GENERATOR LIMITED"
	// Invalid is a step that measured nothing of the target's capacity:
	// requests it refuses as wrong (every one failed with a 4xx), an agent
	// lost, a target that died and cut the step short.
	Invalid = "INVALID"
)

// Rules are the verdict thresholds (DefaultRules unless the plan sets them).
type Rules struct {
	// HealthyP95MS: below it, with errors under MaxErrors, a step is HEALTHY.
	HealthyP95MS float64 `json:"healthy_p95_ms"`
	// OverloadedP95MS: above it a step is OVERLOADED.
	OverloadedP95MS float64 `json:"overloaded_p95_ms"`
	// MaxErrors is the error share (a fraction) above which a step is OVERLOADED.
	MaxErrors float64 `json:"max_errors"`
	// MinRate is the share of the target rate below which an open step is OVERLOADED.
	MinRate float64 `json:"min_rate"`
	// TimeoutMS is the exchange timeout: percentiles at it were shaped by it.
	TimeoutMS float64 `json:"timeout_ms"`
	// MinDelivered is the SLO's delivered>= bound, a fraction (0: none): a
	// step whose deliveries by its end fall short of it is at best
	// STRESSED.
	MinDelivered float64 `json:"min_delivered,omitempty"`
	// Strict says validity findings fail the run (their hints then say how
	// to accept them).
	Strict bool `json:"strict,omitempty"`
}

// DefaultRules are ceiling's default thresholds: HEALTHY below 100 ms p95
// and 1 % errors, OVERLOADED above 500 ms p95, 1 % errors, or an achieved
// rate under 95 % of the target.
var DefaultRules = Rules{HealthyP95MS: 100, OverloadedP95MS: 500, MaxErrors: 0.01, MinRate: 0.95}

// Generator limits: past them a step measured ceiling, not the target.
const (
	// GeneratorLateShare is the share of late arrivals past which the
	// generator did not hold the rate (with at least GeneratorLateMin late:
	// one hiccup in a short step is not a limit).
	GeneratorLateShare = 0.01
	// GeneratorLateMin is the fewest late arrivals that can make a step
	// generator-limited.
	GeneratorLateMin = 5
	// GeneratorCPUShare is the share of the CPUs ceiling may use before it
	// is taken as saturated.
	GeneratorCPUShare = 0.95
)

// Judge sets every step's verdict, reasons, notes and whether it passed,
// and the run's validity findings (Invalid), then decides the run's
// outcome (decide): call it after Evaluate. A strict run (rules.Strict)
// makes a step whose figures a validity guard doubts (redirects, bodies of
// the same page, percentiles the timeout shaped) INVALID, whatever it
// measured; without strictness those findings are listed and fail nothing.
// A step with events is at best STRESSED: the plan stressed it on purpose.
func (r *Result) Judge(rules Rules) {
	r.Invalid = []string{}
	lagNoted := false
	alone := r.sameBodiesAlone()
	for i := range r.Steps {
		s := &r.Steps[i]
		s.GeneratorLimited = s.generatorLimited()
		s.Verdict, s.VerdictReasons = s.verdict(rules)
		findings := s.validity(rules)
		if s.Scenario != "" && !s.Interrupted {
			for _, g := range alone {
				if slices.Contains(g.names, s.Scenario) {
					findings = append(findings, finding{short: "same-size bodies as " + andList(others(g.names, s.Scenario)), text: g.text})
				}
			}
		}
		if rules.Strict && len(findings) > 0 && s.Verdict != Invalid {
			s.Verdict, s.VerdictReasons = Invalid, nil
			for _, f := range findings {
				s.VerdictReasons = append(s.VerdictReasons, f.short)
			}
		}
		s.VerdictReasons = s.eventful(s.VerdictReasons)
		s.VerdictReason = strings.Join(s.VerdictReasons, "; ")
		var prev *Step
		if i > 0 {
			prev = &r.Steps[i-1]
		}
		s.Notes = s.notes(prev, rules)
		if !lagNoted && s.timerLagShows() { // once: it is the generator's, the same on every step
			lagNoted = true
			s.Notes = append(s.Notes, fmt.Sprintf("timer lag: exchanges started on average %s after their intended times (the generator's timer waking it; above 2000/s Go's timers wake with about 1 ms granularity: docs/measurements.md); the latency includes it, service_ms (p50 %s) does not; mean_lag_ms has it for every step",
				ms(s.MeanLagMS), ms(s.ServiceMS.P50)))
		}
		for _, f := range findings {
			r.Invalid = append(r.Invalid, fmt.Sprintf("step %d: %s", s.Index+1, f.text))
		}
		s.Passed = s.passes()
	}
	r.Invalid = append(r.Invalid, r.noSamples...)
	for _, d := range r.DuplicateIDs {
		r.Invalid = append(r.Invalid, fmt.Sprintf("%s repeated %d times", d.Source, d.Count))
	}
	r.decide(rules.Strict)
}

// eventful adds the step's events to its verdict's reasons, first: a step
// in which events happened was stressed on purpose, so a HEALTHY one is
// STRESSED (event: restart), and a worse verdict keeps its word and names
// the events before its own reasons.
func (s *Step) eventful(reasons []string) []string {
	if len(s.Events) == 0 || s.Verdict == "" {
		return reasons
	}
	if s.Verdict == Healthy {
		s.Verdict = Stressed
	}
	ev := "event: "
	if len(s.Events) > 1 {
		ev = "events: "
	}
	return append([]string{ev + strings.Join(s.Events, ", ")}, reasons...)
}

// Pass reports whether the step passed (Passed), and whether it was
// judged at all: a step cut short was not. A step of a result written
// before steps said whether they passed is judged from its verdict and
// SLO, as Passed would be.
func (s *Step) Pass() (passed, judged bool) {
	switch {
	case s.Passed != nil:
		return *s.Passed, true
	case s.Interrupted || s.Verdict == "" && s.SLOPassed == nil:
		return false, false
	}
	return s.Verdict != Overloaded && s.Verdict != GeneratorLimited && s.Verdict != Invalid && (s.SLOPassed == nil || *s.SLOPassed), true
}

// passes says whether the step passed, as find judges a probe and a run
// its steps: a verdict of HEALTHY or STRESSED (a strict run's doubtful
// figures are INVALID) and its SLO held; with repeats, when most of them
// passed. Nil for a step that was cut short, which is not judged.
func (s *Step) passes() *bool {
	if s.Interrupted {
		return nil
	}
	ok := (s.Verdict == Healthy || s.Verdict == Stressed) && (s.SLOPassed == nil || *s.SLOPassed)
	if r := s.Repeat; r != nil && r.N > 0 {
		ok = 2*r.Passed > r.N
	}
	return &ok
}

// lateShare is the share of the window's arrivals that were late, those
// never sent included.
func (s *Step) lateShare() float64 {
	return float64(s.Late) / float64(max(s.Sent+s.NotSent, 1))
}

// generatorLimited reports whether ceiling could not hold the step's
// rate: too many arrivals late, or its CPU spent; merged from several
// generators, whether one of them could not hold its share.
func (s *Step) generatorLimited() bool {
	late := s.Late >= GeneratorLateMin && s.lateShare() > GeneratorLateShare
	cpu := s.Generator != nil && s.Generator.CPUs > 0 && s.Generator.CPUPct >= GeneratorCPUShare*100*float64(s.Generator.CPUs) && len(s.Parts) == 0
	own := s.ownFailures() > 0 && len(s.Parts) == 0
	memory := s.Generator != nil && s.Generator.MemoryBudgetMB > 0 && s.Late > 0 && len(s.Parts) == 0
	return late || cpu || own || memory || slices.ContainsFunc(s.Parts, func(p Part) bool { return p.GeneratorLimited })
}

// ownFailures counts the exchanges that failed in ceiling itself, before
// reaching the target: out of file descriptors or local ports (the class
// generator). One is enough to make a step GENERATOR LIMITED: an exchange
// the target never saw is not a figure of the target's.
func (s *Step) ownFailures() int64 { return s.Errors[transport.Generator.String()] }

// verdict applies the rules. The reasons name every figure past a rule of
// the verdict given, the deciding one first: an OVERLOADED step lists each
// of its errors, p95 and achieved rate that is over; a HEALTHY one none.
func (s *Step) verdict(rules Rules) (string, []string) {
	p95 := s.LatencyMS.P95
	switch {
	case s.Lost != "":
		return Invalid, []string{s.Lost}
	case s.Interrupted && s.Target != nil && s.Target.Died != "":
		return Invalid, []string{"the target died (" + s.Target.Died + "): the step was cut there"}
	case s.GeneratorLimited:
		return GeneratorLimited, s.generatorReasons()
	case s.noLogin() != "":
		return Invalid, []string{s.noLogin()}
	case s.idle():
		return s.socketVerdict()
	case s.Completed == 0:
		return Overloaded, []string{"no exchange completed"}
	case s.wrongRequest() != "":
		return Invalid, []string{s.wrongRequest()}
	}
	var over []string
	if s.ErrorRate > rules.MaxErrors {
		over = append(over, fmt.Sprintf("errors %.1f%% > %.1f%%", 100*s.ErrorRate, 100*rules.MaxErrors))
	}
	if p95 > rules.OverloadedP95MS {
		over = append(over, fmt.Sprintf("p95 %s > %s", ms(p95), ms(rules.OverloadedP95MS)))
	}
	if s.TargetRate > 0 && s.AchievedRate < rules.MinRate*s.TargetRate {
		over = append(over, fmt.Sprintf("achieved %.0f/s < %.0f%% of %.0f/s", s.AchievedRate, 100*rules.MinRate, s.TargetRate))
	}
	if why := s.FellBehind(); why != "" {
		over = append(over, why)
	}
	if len(over) > 0 {
		return Overloaded, over
	}
	var stressed []string
	if p95 >= rules.HealthyP95MS {
		stressed = append(stressed, fmt.Sprintf("p95 %s ≥ %s", ms(p95), ms(rules.HealthyP95MS)))
	}
	if why := s.shortOfDelivered(rules.MinDelivered); why != "" {
		stressed = append(stressed, why)
	}
	if len(stressed) > 0 {
		return Stressed, stressed
	}
	return Healthy, []string{}
}

// A step's delivery fell behind when its backlog (accepted ids not yet
// delivered) grew through its window beyond its own noise: the target
// accepted faster than it delivered, and a queue that grows for as long
// as the load lasts has no bound, however well a drain clears it
// afterwards.
//
// The growth is the trend of the backlog sampled across the window
// (Delivery.BacklogSamples): the Theil–Sen slope times the window, which
// one odd instant does not tilt. A pipeline that holds every id for a
// fixed time has a flat backlog whose level moves from instant to instant
// by chance (±√140 when it holds about 140 sent at random times): the
// samples' scatter about the line (trend.Fit.Sigma) measures that, and
// the growth must pass BacklogNoise times it, as well as
// BacklogGrowthShare of the ids the step accepted and BacklogGrowthMin,
// which keep a few posts in flight at either end from counting. A result
// from before the samples were kept is judged on the window's two ends.
//
// A backlog also grows when the target is sent more: a pipeline that
// holds each id 1.5 s holds 1.5 s of what it accepted, and a closed
// model's users send faster when the machine lets them (180 → 191 ids
// through a 3 s step, with its tests beside it). Where the samples' waits
// are kept (Delivery.BacklogWaitS), a backlog that grew fell behind only
// when its ids' mean wait grew too, by more than BacklogNoise times its
// scatter and BacklogWaitShare of its median: a queue the target does not
// keep up with makes each id wait longer.
const (
	BacklogGrowthShare = 0.01
	BacklogGrowthMin   = 5
	BacklogNoise       = 3
	BacklogWaitShare   = 0.05
)

// keptUp reports whether the backlog's mean wait stayed flat through the
// window (see FellBehind); false when its waits were not kept.
func (d *Delivery) keptUp() bool {
	n := len(d.BacklogSamples)
	if n < 5 || len(d.BacklogWaitS) != n {
		return false
	}
	mean := make([]float64, n)
	for i, c := range d.BacklogSamples {
		if c > 0 {
			mean[i] = d.BacklogWaitS[i] / float64(c)
		}
	}
	f := trend.Even(mean)
	return f.Slope*float64(n-1) <= max(BacklogNoise*f.Sigma, BacklogWaitShare*Median(mean))
}

// BacklogSampleCount is how many instants of a step's window its backlog
// is sampled at (Delivery.BacklogSamples): every twentieth of the window.
const BacklogSampleCount = 21

// FellBehind says how the step's delivery fell behind ("delivery fell
// behind: backlog 4 → 15 (accepted 161/s, delivered 157/s)"), "" when it
// kept up or was not measured.
func (s *Step) FellBehind() string {
	d := s.Delivery
	if d == nil || d.BacklogStart == nil || d.BacklogEnd == nil {
		return ""
	}
	start, end := *d.BacklogStart, *d.BacklogEnd
	grew := float64(end - start)
	margin := max(BacklogGrowthMin, BacklogGrowthShare*float64(d.Expected))
	if n := len(d.BacklogSamples); n >= 5 {
		y := make([]float64, n)
		for i, v := range d.BacklogSamples {
			y[i] = float64(v)
		}
		f := trend.Even(y)
		grew = f.Slope * float64(n-1)
		margin = max(margin, BacklogNoise*f.Sigma)
	}
	if grew <= margin || d.keptUp() {
		return ""
	}
	why := fmt.Sprintf("delivery fell behind: backlog %d → %d", start, end)
	if s.DurationS > 0 && s.Repeat == nil {
		accepted := float64(d.Expected) / s.DurationS
		why += fmt.Sprintf(" (accepted %s/s, delivered %s/s)", rate(accepted), rate(accepted-grew/s.DurationS))
	}
	return why
}

// shortOfDelivered says how the step's deliveries by its end fell short
// of the SLO's delivered>= bound min (a fraction), "" when they did not.
func (s *Step) shortOfDelivered(bound float64) string {
	d := s.Delivery
	if bound <= 0 || d == nil || d.Expected == 0 {
		return ""
	}
	n, when := d.Delivered, ""
	if d.AtStepEnd != nil {
		n, when = *d.AtStepEnd, " by the step's end"
	}
	share := float64(n) / float64(d.Expected)
	if share >= bound {
		return ""
	}
	return fmt.Sprintf("delivered %.1f%%%s < %g%%", 100*share, when, 100*bound)
}

// rate writes a rate per second with the precision its size needs.
func rate(v float64) string {
	if v >= 100 || v <= -100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// generatorReason says why the step is GENERATOR LIMITED, in one line.
func (s *Step) generatorReason() string { return strings.Join(s.generatorReasons(), "; ") }

// generatorReasons says why the step is GENERATOR LIMITED: exchanges that
// failed in ceiling itself, then what kept it from holding the rate.
func (s *Step) generatorReasons() []string {
	var out, why []string
	if n := s.ownFailures(); n > 0 && len(s.Parts) == 0 {
		out = append(out, fmt.Sprintf("ceiling ran out of file descriptors (ulimit -n) or local ports: %d exchanges failed in ceiling itself, never reaching the target (class generator)", n))
	}
	if s.Late >= GeneratorLateMin && s.lateShare() > GeneratorLateShare {
		why = append(why, fmt.Sprintf("%.1f%% of arrivals late (max lag %s)", 100*s.lateShare(), ms(s.MaxLagMS)))
	}
	if s.NotSent > 0 {
		why = append(why, fmt.Sprintf("%d never sent", s.NotSent))
	}
	if g := s.Generator; g != nil && g.ConnLimit > 0 && len(why) > 0 {
		why = append(why, fmt.Sprintf("its connections held at %d by its open-file limit of %d (ulimit -n; a reserve kept for its files)", g.ConnLimit, g.FDLimit))
	}
	if g := s.Generator; g != nil && g.MemoryBudgetMB > 0 && s.Late > 0 {
		why = append(why, fmt.Sprintf("its users held at %d by its memory budget of %.0f MiB (the heap at %.0f MiB): a late arrival waited for a user to come free instead of making one", s.Workers, g.MemoryBudgetMB, g.HeapAtLimitMB))
	}
	if g := s.Generator; g != nil && g.CPUPct >= GeneratorCPUShare*100*float64(g.CPUs) {
		why = append(why, fmt.Sprintf("ceiling used %.0f%% CPU of %d cores", g.CPUPct, g.CPUs))
	}
	for _, p := range s.Parts {
		if p.GeneratorLimited {
			why = append(why, "agent "+p.Agent+" could not hold its share ("+strings.TrimPrefix(p.Reason, "ceiling could not hold the rate: ")+")")
		}
	}
	if len(why) > 0 || len(out) == 0 {
		out = append(out, "ceiling could not hold the rate: "+strings.Join(why, ", "))
	}
	return out
}

// finding is one thing that makes a step's figures untrustworthy: text
// says it in full (result.json's invalid[], the INVALID lines), short in
// a few words (the verdict's reason when it makes the step INVALID).
type finding struct{ short, text string }

// validity lists what makes the step's figures untrustworthy.
func (s *Step) validity(rules Rules) []finding {
	var w []finding
	if s.Lost != "" {
		return []finding{{s.Lost, s.Lost}}
	}
	if s.Interrupted {
		return nil
	}
	if s.Completed == 0 && s.Sent > 0 {
		w = append(w, finding{"no exchange completed", "no exchange completed"})
	}
	if why := s.wrongRequest(); why != "" {
		w = append(w, finding{why, why})
	}
	if why := s.noLogin(); why != "" {
		w = append(w, finding{why, why})
	}
	if s.Redirected > 0 {
		accept := ""
		if rules.Strict {
			accept = " (if they are, set strict: false or --strict=false)"
		}
		w = append(w, finding{fmt.Sprintf("%d answers after a redirect", s.Redirected),
			fmt.Sprintf("%d answers counted as ok came after following a redirect: check they are the page asked for, not a login page (compare avg body sizes)%s", s.Redirected, accept)})
	}
	if n := s.Errors["redirect"]; n > 0 {
		w = append(w, finding{fmt.Sprintf("%d redirects", n), fmt.Sprintf("%d redirects: a page that answers with a redirect (to a login page?) is not the page", n)})
	}
	if s.timeoutShaped(rules) && (s.Verdict == Healthy || s.Verdict == Stressed) {
		w = append(w, finding{"p99 at the timeout", fmt.Sprintf("p99 %s reached the timeout (%s): the timeout, not the target, shaped the percentiles", ms(s.LatencyMS.P99), ms(rules.TimeoutMS))})
	}
	return append(w, s.sameBodies()...)
}

// timeoutShaped reports whether the step's p99 reached the exchange
// timeout: its percentiles are then the timeout's, lower bounds of the
// target's. An OVERLOADED (or GENERATOR LIMITED) step says so in a note:
// its verdict stands either way, and the top of a stairs that overloads
// its target is not invalid for it.
func (s *Step) timeoutShaped(rules Rules) bool {
	return rules.TimeoutMS > 0 && s.Completed > 0 && s.LatencyMS.P99 >= 0.99*rules.TimeoutMS
}

// idle reports whether the step sent nothing by design and held sockets:
// an idle soak, judged on its sockets instead of exchanges it never meant
// to make.
func (s *Step) idle() bool {
	return s.Completed == 0 && s.Sent == 0 && s.WebSocket != nil && s.WebSocket.Wanted > 0 &&
		(s.Logins == nil || s.Logins.Skipped == 0) // not arrivals skipped for want of a login
}

// noLogin says why a step in which no user logged in measured nothing of
// the target's capacity (a wrong password is not an overload), "" when
// some did or there is no login.
func (s *Step) noLogin() string {
	l := s.Logins
	if l == nil || l.OK > 0 || l.Failed == 0 || s.Completed > 0 {
		return ""
	}
	return fmt.Sprintf("no user logged in: all %d login attempts failed (%s): check the login request and the users' credentials", l.Count, topClasses(l.ByClass))
}

// IdleHeldShare is the share of its sockets an idle soak must hold at a
// step's end not to be OVERLOADED.
const IdleHeldShare = 0.99

// socketVerdict judges an idle soak's step: HEALTHY when every socket was
// held, STRESSED when some dropped (and were reopened) or are missing,
// OVERLOADED when fewer than IdleHeldShare are open at its end.
func (s *Step) socketVerdict() (string, []string) {
	w := s.WebSocket
	held := fmt.Sprintf("%d of %d sockets open at the step's end", w.Open, w.Wanted)
	var also []string
	if w.Dropped > 0 {
		also = append(also, fmt.Sprintf("%d dropped", w.Dropped))
	}
	if w.Failed > 0 {
		also = append(also, fmt.Sprintf("%d handshakes failed", w.Failed))
	}
	if len(also) > 0 {
		held += " (" + strings.Join(also, ", ") + ")"
	}
	switch {
	case float64(w.Open) < IdleHeldShare*float64(w.Wanted):
		return Overloaded, []string{held}
	case w.Open < w.Wanted || w.Dropped > 0 || w.Failed > 0:
		return Stressed, []string{held}
	}
	return Healthy, []string{}
}

// wrongRequest says why a step whose every exchange failed with a 4xx
// measured a wrong request (a wrong URL's 404, missing credentials' 401),
// not an overloaded target; "" when it did not.
func (s *Step) wrongRequest() string {
	if s.Completed == 0 || s.Errors["http_4xx"] != s.Completed {
		return ""
	}
	status := "a 4xx status"
	if s.Status4xx > 0 {
		status = fmt.Sprintf("%d %s", s.Status4xx, http.StatusText(s.Status4xx))
	}
	check := RefusedHint(s.Status4xx)
	return fmt.Sprintf("every request failed with %s: %s (a request the target refuses says nothing of its capacity)", strings.TrimSpace(status), check)
}

// RefusedHint says what to check of a request the target answered with
// status, a 4xx: "check the URL and method" for a 404, "check the
// credentials (headers, login)" for a 401, "check the request" for a
// status without a more precise hint (0 among them).
func RefusedHint(status int) string {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone:
		return "check the URL and method"
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired:
		return "check the credentials (headers, login)"
	case http.StatusBadRequest, http.StatusLengthRequired, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return "check the body and headers"
	}
	return "check the request"
}

// SameBodyMinBytes is the smallest average body the same-size guard
// compares: below it, distinct pages share a size by chance ("ok\n" and
// "[]\n" are both 3 bytes), while the pages it is there to catch (a
// login page, an error page served for every URL) are larger.
const SameBodyMinBytes = 32

// bodyGroup is scenarios whose bodies had the same average size, and the
// finding that says so.
type bodyGroup struct {
	names []string
	text  string
}

// sameBodiesAlone finds scenarios run alone (load.each) whose bodies have
// the same average size at every level both ran: a redirect to the login
// page, served for every page, is told by exactly this. Scenarios alike
// pairwise are grouped (a and b, b and c: one group), one finding each.
func (r *Result) sameBodiesAlone() []bodyGroup {
	type level struct {
		rate float64
		vus  int
	}
	body := map[string]map[level]float64{}
	var names []string
	for _, s := range r.Steps {
		if s.Scenario == "" || s.Completed == 0 || s.Interrupted {
			continue
		}
		for _, b := range s.Scenarios {
			if b.Name != s.Scenario || b.WebSocket || b.AvgBodyBytes < SameBodyMinBytes {
				continue
			}
			if body[b.Name] == nil {
				body[b.Name] = map[level]float64{}
				names = append(names, b.Name)
			}
			body[b.Name][level{s.TargetRate, s.VUs}] = b.AvgBodyBytes
		}
	}
	alike := func(a, b string) bool {
		shared := 0
		for l, x := range body[a] {
			if y, ok := body[b][l]; ok {
				if x != y {
					return false
				}
				shared++
			}
		}
		return shared > 0
	}
	var out []bodyGroup
	for _, g := range groups(names, alike) {
		out = append(out, bodyGroup{names: g, text: fmt.Sprintf("scenarios %s, each run alone, return bodies of the same average size at every level: probably the same page (a login page or an error page) instead of theirs", andList(g))})
	}
	return out
}

// sameBodies finds scenarios that return bodies of exactly the same average
// size: different pages rarely do, and a login page or an error page served
// in their place does. Websocket scenarios are left out: their answers are
// acks, alike by design. One finding for each size that several share.
func (s *Step) sameBodies() []finding {
	var names []string
	size := map[string]float64{}
	for _, b := range s.Scenarios {
		if b.Completed > 0 && b.AvgBodyBytes >= SameBodyMinBytes && !b.WebSocket {
			names = append(names, b.Name)
			size[b.Name] = b.AvgBodyBytes
		}
	}
	var w []finding
	for _, g := range groups(names, func(a, b string) bool { return size[a] == size[b] }) {
		w = append(w, finding{fmt.Sprintf("same-size bodies: %s", andList(g)),
			fmt.Sprintf("scenarios %s return bodies of the same average size (%.0f B): probably the same page (a login page or an error page) instead of theirs", andList(g), size[g[0]])})
	}
	return w
}

// others is names without name.
func others(names []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == name })
}

// groups puts names together by alike, transitively (a like b and b like
// c: one group), and returns the groups of two or more, each in the order
// of names, in the order of their first name.
func groups(names []string, alike func(a, b string) bool) [][]string {
	of := make([]int, len(names)) // each name's group: the index of its first name
	for i := range names {
		of[i] = i
	}
	root := func(i int) int {
		for of[i] != i {
			i = of[i]
		}
		return i
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if alike(names[i], names[j]) {
				a, b := root(i), root(j)
				of[max(a, b)] = min(a, b)
			}
		}
	}
	var out [][]string
	index := map[int]int{}
	for i, n := range names {
		r := root(i)
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], n)
	}
	return slices.DeleteFunc(out, func(g []string) bool { return len(g) < 2 })
}

// andList writes names as "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func ms(v float64) string {
	d := time.Duration(v * float64(time.Millisecond))
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// CPU shares behind the target notes.
const (
	// CPUBoundShare of its CPU limit makes a target CPU-bound.
	CPUBoundShare = 0.95
	// IdleCPUShare: below this share of its limit, a latency jump is not
	// the CPU's doing.
	IdleCPUShare = 0.80
)

// TimerLagShare is the share of the median latency past which the mean
// schedule lag is noted, and TimerLagMinMS the least lag that is.
const (
	TimerLagShare = 0.25
	TimerLagMinMS = 0.2
)

// timerLagShows reports whether the open model's own start lag is a
// noticeable part of the latency: a fast target measured at a rate whose
// arrivals are further apart than the timers' granularity.
func (s *Step) timerLagShows() bool {
	return s.Model == "open" && s.Completed > 0 && s.MeanLagMS >= TimerLagMinMS && s.MeanLagMS >= TimerLagShare*s.LatencyMS.P50
}

// notes explain a step from the target's side: CPU-bound, or latency that
// rose while the CPU had room ("the CPU sat at 60 %, yet p99 went from 6 ms
// to 482 ms": something blocked).
func (s *Step) notes(prev *Step, rules Rules) []string {
	var n []string
	if d := s.Delivery; d != nil && d.Lost > 0 {
		n = append(n, fmt.Sprintf("delivery lost messages: %d of %d accepted ids never reached the sink (nothing arrived in the drain's last seconds)", d.Lost, d.Expected))
	} else if d != nil && d.Undelivered > 0 {
		n = append(n, fmt.Sprintf("delivery: %d of %d accepted ids are missing (not delivered yet, not proven lost)", d.Undelivered, d.Expected))
	}
	if (s.Verdict == Overloaded || s.Verdict == GeneratorLimited) && s.timeoutShaped(rules) {
		n = append(n, fmt.Sprintf("p99 %s reached the timeout (%s): its percentiles are lower bounds, shaped by the timeout", ms(s.LatencyMS.P99), ms(rules.TimeoutMS)))
	}
	t := s.Target
	if t == nil {
		return n
	}
	switch { // said whether or not a sample was taken before: a target may die before its first
	case t.Died != "":
		n = append(n, "the target died ("+t.Died+")")
	case t.Exited:
		n = append(n, "the target exited during the step")
	}
	if t.Samples == 0 {
		return n
	}
	limit := t.CPULimitPct
	if limit <= 0 {
		return n
	}
	jumped := prev != nil && prev.Completed > 0 && s.LatencyMS.P99 > 2*prev.LatencyMS.P99 && s.LatencyMS.P99 > rules.HealthyP95MS
	switch {
	case t.CPUPct >= CPUBoundShare*limit:
		n = append(n, fmt.Sprintf("CPU-bound: the target used %.0f%% of its %.0f%%", t.CPUPct, limit))
	case jumped && t.CPUPct < IdleCPUShare*limit:
		n = append(n, fmt.Sprintf("latency rose without CPU saturation (p99 %s → %s at %.0f%% of %.0f%% CPU): something blocks (I/O, locks, a pool)",
			ms(prev.LatencyMS.P99), ms(s.LatencyMS.P99), t.CPUPct, limit))
	}
	return n
}

// StepInvalid reports whether a validity finding (Invalid) is about the
// step of that index.
func (r *Result) StepInvalid(index int) bool {
	prefix := fmt.Sprintf("step %d: ", index+1)
	for _, w := range r.Invalid {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

// topClasses writes failure counts by class, "timeout 3, http_4xx 2",
// most first.
func topClasses(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
