package scenario

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Set is a plan's scenarios compiled for running.
type Set struct {
	scenarios []*compiled
	cum       []float64 // cumulative weight shares; the last is 1
	only      int       // Pick's answer when ≥ 0 (a scenario run alone); -1: the mix
	login     []*request
	vars      []namedText
	users     []map[string]string
	tagKeys   []string
	tagLimit  int
	tmpls     templates
	seed      uint64
	nonce     uint64 // seeds uuid: random per run, so ids never repeat across runs
	seq       atomic.Int64

	obeyRetryAfter bool
	ids            *ids
	deliveries     Deliveries
	closed         bool     // the closed model: each user holds its own sockets
	connects       connects // handshake times of every websocket scenario
	idVars         []int    // indexes into vars of the vars watched for repeats
	idVarNames     []string // their sources, as reported
	refused        refusals
	droppedCookies atomic.Int64
	made           atomic.Uint64 // users made so far: each draws its uuids from its own stream
	failedCheck    checkNote
	frames         *Frames // the frames engine, when the sockets are an event loop's (LoopFrames)
}

// checkNote keeps the first failed check since it was last taken, with an
// excerpt of the body it failed on.
type checkNote struct {
	have    atomic.Bool // an example is kept: later failures skip the work
	mu      sync.Mutex
	example string
}

// noteCheck keeps what failed, if no example is kept yet.
func (s *Set) noteCheck(r *request, out *transport.Outcome, login bool, what string) {
	if login || s.failedCheck.have.Load() {
		return // a login's failures are the logins' figures, and its answers hold credentials
	}
	body := "body " + excerpt(out.Body, 160)
	switch {
	case len(out.Body) == 0 && out.BytesIn > 0:
		// The check did not need the body, so it was read and let go.
		body = fmt.Sprintf("body not kept (%d bytes)", out.BytesIn)
	case len(out.Body) == 0:
		body = "body (empty)"
	case secret.Mentions(out.Body):
		body = "body (not shown: it mentions a token, password or secret)"
	}
	if secret.Mentions([]byte(what)) {
		what = "a check failed (what it found is not shown: it mentions a token, password or secret)"
	}
	n := &s.failedCheck
	n.mu.Lock()
	if n.example == "" {
		n.example = fmt.Sprintf("%s: %s; status %d, %s", r.name, what, out.Status, body)
		n.have.Store(true)
	}
	n.mu.Unlock()
}

// TakeFailedCheck returns the first failed check since the last call (the
// request, the check, the status and a body excerpt), "" when none, and
// forgets it: each step gets its own example.
func (s *Set) TakeFailedCheck() string {
	n := &s.failedCheck
	n.mu.Lock()
	defer n.mu.Unlock()
	ex := n.example
	n.example = ""
	n.have.Store(false)
	return ex
}

// DroppedCookies returns how many cookies of new names the virtual users did
// not store because their jars held MaxCookies names already.
func (s *Set) DroppedCookies() int64 { return s.droppedCookies.Load() }

// refusals counts the requests not sent because what they would have sent
// was unsafe (see headerSafe), and keeps the first reason.
type refusals struct {
	n     atomic.Int64
	once  sync.Once
	first string // written once, before n first grows
}

// refuse notes err, if not nil, as a refused request and returns it.
func (s *Set) refuse(err error) error {
	if err != nil {
		s.refused.once.Do(func() { s.refused.first = err.Error() })
		s.refused.n.Add(1)
	}
	return err
}

// Refused returns how many requests were not sent because a rendered
// header would have injected others (their iterations fail as checks), and
// the first reason.
func (s *Set) Refused() (int64, string) {
	n := s.refused.n.Load()
	if n == 0 {
		return 0, ""
	}
	return n, s.refused.first
}

// compiled is one scenario: its steps (one for a single request), or its
// websocket frames, and its tags.
type compiled struct {
	name     string
	steps    []*request
	ws       *wsScenario
	tags     []tagText
	delivery *delivery
}

// delivery is a scenario's expected id at a sink.
type delivery struct {
	sink int // index into the plan's sinks
	id   text
}

// Deliveries takes note of what accepted iterations expect to arrive at the
// plan's sinks (package delivery implements it). Safe for concurrent use.
type Deliveries interface {
	// Expect notes that id is expected at sink, sent at at, in step (-1: warm-up).
	Expect(sink int, id string, at time.Time, step int)
	// Reject notes an iteration of step the target did not accept.
	Reject(sink, step int)
}

// SetDeliveries makes accepted iterations report their delivery ids to d.
// Call it before the first step.
func (s *Set) SetDeliveries(d Deliveries) { s.deliveries = d }

type namedText struct {
	name string
	text text
	late bool // a var evaluated after the login: it reads what the login extracts
}

type tagText struct {
	key  int // index into Set.tagKeys
	text text
}

// Compile builds the Set of a validated plan.
func Compile(p *plan.Plan) (*Set, error) {
	s := &Set{only: -1, users: p.Users(), tagLimit: p.TagLimit, seed: uint64(p.Load.Seed), nonce: rand.Uint64(), obeyRetryAfter: p.HTTP.ObeyRetryAfter, ids: newIDs(),
		closed: p.Load.Model == plan.Closed, connects: connects{h: metrics.NewHistogram()}}
	var total float64
	for i := range p.Scenarios {
		sc := &p.Scenarios[i]
		c, err := s.compileScenario(p, fmt.Sprintf("scenarios[%d]", i), sc)
		if err != nil {
			return nil, err
		}
		s.scenarios = append(s.scenarios, c)
		total += sc.Weight
		s.cum = append(s.cum, total)
	}
	if len(s.scenarios) == 0 || total <= 0 || math.IsInf(total, 0) {
		return nil, fmt.Errorf("compile plan: no scenario with a positive weight")
	}
	for i := range s.cum {
		s.cum[i] /= total
	}
	s.cum[len(s.cum)-1] = 1
	unique, err := s.compileVars(p)
	if err != nil {
		return nil, err
	}
	for _, c := range s.scenarios {
		for _, r := range c.steps {
			r.watchIDs(unique, s.ids)
		}
	}
	for i := range p.Login {
		st := &p.Login[i]
		r, err := compileRequest(p, &s.tmpls, fmt.Sprintf("login[%d]", i), st.Name, &st.Request, &st.Expect, st.Extract)
		if err != nil {
			return nil, err
		}
		r.watchIDs(unique, s.ids)
		s.login = append(s.login, r)
	}
	s.tmpls.ready(&s.seq)
	return s, nil
}

// compileVars compiles the vars, notes which are unique by construction and
// which look like ids to watch for repeats, and returns the unique ones.
func (s *Set) compileVars(p *plan.Plan) ([]string, error) {
	names := make([]string, 0, len(p.Vars))
	for n := range p.Vars {
		names = append(names, n)
	}
	slices.Sort(names)
	late := p.VarsAfterLogin()
	var unique []string
	for _, n := range names {
		t, err := s.tmpls.text("vars."+n, p.Vars[n])
		if err != nil {
			return nil, err
		}
		s.vars = append(s.vars, namedText{name: n, text: t, late: slices.Contains(late, n)})
		switch {
		case uniqueByConstruction(p.Vars[n], nil):
			unique = append(unique, n)
		case idName.MatchString(n):
			s.idVars = append(s.idVars, len(s.vars)-1)
			s.idVarNames = append(s.idVarNames, "vars."+n)
			s.ids.hideIfData("vars."+n, p.Vars[n])
		}
	}
	return unique, nil
}

func (s *Set) compileScenario(p *plan.Plan, where string, sc *plan.Scenario) (*compiled, error) {
	c := &compiled{name: sc.Name}
	if sc.WebSocket != nil {
		ws, err := compileWS(p, &s.tmpls, where, sc.WebSocket)
		if err != nil {
			return nil, err
		}
		c.ws = ws
	} else if len(sc.Steps) == 0 {
		r, err := compileRequest(p, &s.tmpls, where, sc.Name, &sc.Request, &sc.Expect, sc.Extract)
		if err != nil {
			return nil, err
		}
		c.steps = []*request{r}
	}
	for j := range sc.Steps {
		st := &sc.Steps[j]
		r, err := compileRequest(p, &s.tmpls, fmt.Sprintf("%s.steps[%d]", where, j), st.Name, &st.Request, &st.Expect, st.Extract)
		if err != nil {
			return nil, err
		}
		c.steps = append(c.steps, r)
	}
	if d := sc.Delivery; d != nil {
		id, err := s.tmpls.text(where+".delivery.id", d.ID)
		if err != nil {
			return nil, err
		}
		c.delivery = &delivery{sink: slices.IndexFunc(p.Sinks, func(k plan.Sink) bool { return k.Name == d.Sink }), id: id}
		if c.delivery.sink < 0 {
			return nil, fmt.Errorf("%s.delivery.sink: no sink named %q", where, d.Sink)
		}
	}
	keys := make([]string, 0, len(sc.Tags))
	for k := range sc.Tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t, err := s.tmpls.text(where+".tags."+k, sc.Tags[k])
		if err != nil {
			return nil, err
		}
		idx := slices.Index(s.tagKeys, k)
		if idx < 0 {
			s.tagKeys = append(s.tagKeys, k)
			idx = len(s.tagKeys) - 1
		}
		c.tags = append(c.tags, tagText{key: idx, text: t})
	}
	return c, nil
}

// WebSockets returns the names of the websocket scenarios.
func (s *Set) WebSockets() []string {
	var out []string
	for _, c := range s.scenarios {
		if c.ws != nil {
			out = append(out, c.name)
		}
	}
	return out
}

// Names returns the scenario names in plan order: the index of a name is
// the scenario index in metrics.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.scenarios))
	for _, c := range s.scenarios {
		out = append(out, c.name)
	}
	return out
}

// HasLogin reports whether the plan has a login flow.
func (s *Set) HasLogin() bool { return len(s.login) > 0 }

// TagKeys returns the tag keys; the index of a key is its index in metrics.
func (s *Set) TagKeys() []string { return s.tagKeys }

// Layout returns the metrics breakdowns this set needs.
func (s *Set) Layout() metrics.Layout {
	return metrics.Layout{Scenarios: len(s.scenarios), TagKeys: len(s.tagKeys), TagLimit: s.tagLimit, Login: len(s.login) > 0}
}

// Len counts the scenarios.
func (s *Set) Len() int { return len(s.scenarios) }

// Pick returns the index of the scenario that a uniform 64-bit number u
// selects by weight.
func (s *Set) Pick(u uint64) int {
	if s.only >= 0 {
		return s.only
	}
	x := float64(u>>11) / (1 << 53)
	i, _ := slices.BinarySearch(s.cum, x)
	for i < len(s.cum)-1 && s.cum[i] <= x {
		i++
	}
	return min(i, len(s.cum)-1)
}

// Only makes Pick choose scenario i alone from now on (-1: the weighted
// mix again). Call it between steps, when no iteration runs.
func (s *Set) Only(i int) { s.only = i }

// Mix turns a seed and an index into a well-spread 64-bit number
// (SplitMix64), for Pick.
func Mix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Seed returns the run's seed.
func (s *Set) Seed() uint64 { return s.seed }

// Preflight performs the run's first requests, each once with virtual
// user 0's data: the login flow's first step alone (the scenarios need its
// session), or else the first request of each scenario that has one, in
// plan order (a websocket scenario's preflight is opening its sockets). It
// hands each outcome to next, with the name of its scenario ("login" for
// the login's), and sends the next request only while next returns true.
// A template that cannot render is an error: the plan asks for something
// its first request cannot have.
func (s *Set) Preflight(sess transport.Session, next func(name string, out transport.Outcome) bool) error {
	v := s.newVU(0, preflightStream, preflightStream, sess) // user 0's data, its own random draws
	rendered := false
	send := func(name string, r *request, login bool) (bool, error) {
		if !rendered {
			v.base()
			if err := v.evalVars(false); err != nil {
				return false, err
			}
			if !login { // with a login, the vars after it are not needed by its first request
				if err := v.evalVars(true); err != nil {
					return false, err
				}
			}
			rendered = true
		}
		tr, err := v.build(r)
		if err != nil {
			return false, fmt.Errorf("render %s: %w", r.name, err)
		}
		var out transport.Outcome
		sess.Do(tr, &out)
		return next(name, out), nil
	}
	if len(s.login) > 0 {
		_, err := send("login", s.login[0], true)
		return err
	}
	for _, c := range s.scenarios {
		if len(c.steps) == 0 {
			continue
		}
		if more, err := send(c.name, c.steps[0], false); err != nil || !more {
			return err
		}
	}
	return nil
}
