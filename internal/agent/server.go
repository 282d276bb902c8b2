package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/control"
	"github.com/ceiling-dev/ceiling/internal/failure"
	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/schedule"
)

// Limits bound what a coordinator may ask of this agent, per step: its
// share of the rate, of the users, and the step's length with its
// warm-up. Zero: no bound.
type Limits struct {
	MaxRate     float64
	MaxUsers    int
	MaxDuration time.Duration
}

// Server is an agent: it serves the control API to one coordinator at a
// time, runs the plan it is given with the same engine as `ceiling run`
// (package run), one step at a time, its segment's share of each, and
// answers each step's figures. Every request but the health check needs
// the bearer token.
type Server struct {
	// Token is the bearer token a coordinator must present.
	Token string
	// AllowCommands lets a plan start commands on this machine
	// (monitor.command); refused otherwise.
	AllowCommands bool
	// AllowTargets, when not empty, are the only hosts a plan may send
	// load to: a plan that names another, or a host it cannot check (a
	// template, redirects followed), is refused.
	AllowTargets Targets
	Limits       Limits
	// Version is ceiling's version, which a coordinator must share.
	Version string
	// Lease is how long a session outlives the last word from its
	// coordinator (a heartbeat, a step, a stop): a coordinator that died
	// or lost its network loses the agent this long after its last
	// heartbeat, its running step stopped, and another coordinator may
	// then open a session. Zero: DefaultLease.
	Lease time.Duration
	// Log, if set, is told what the agent does, a line at a time.
	Log func(string)
	// Ended, if set, is called after a session has closed (an agent that
	// serves one run, --once, stops then).
	Ended func()
	// Conns bound what a client's connections may hold (HTTPServer and
	// Listener apply them).
	Conns Conns
	// Lifecycle, when set, is given the command targets the sessions start
	// (AllowCommands), so that an abort of the agent kills them
	// (run.Options.Lifecycle); nil keeps nothing.
	Lifecycle *control.Lifecycle

	// mu guards the fields below; it is held for moments only, never
	// while a session opens (which checks the target) or a step runs: the
	// health check answers at once whatever the agent does.
	// guesses throttles wrong bearer tokens by address.
	guesses guesses

	mu      sync.Mutex
	sess    *session
	opening bool // a session is opening: the agent is busy
	opened  bool // a session has opened, ever
	stopped bool // Close was called: no session may open
}

// session is the coordinator's run on this agent.
type session struct {
	id      string
	run     *run.Session
	dir     string // the plan's folder (its users file)
	segment schedule.Segment
	drain   time.Duration // how long a step may go on after its window (run.DrainBound)
	lease   *lease
	mu      sync.Mutex // one step at a time
	closed  bool       // under mu: the run is closed, no step may use it

	stopMu  sync.Mutex
	stop    context.CancelFunc // cancels the running step (Ctrl-C at the coordinator)
	closing bool               // under stopMu: the session is ending, no step may start
	ran     map[string]bool    // under stopMu: the ids of the steps accepted, each runs once
}

// maxLead bounds how far ahead of now a step may be set to start.
const maxLead = time.Minute

// maxRequest bounds the body of every request but a session's opening
// (maxOpen): a step is a few hundred bytes.
const maxRequest = 1 << 20

// Handler returns the API's HTTP handler. A request's body is bounded
// (maxOpen for a session's opening, maxRequest for the others): a larger
// one is refused (413) before it is read.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathHealth, s.health)
	mux.HandleFunc("GET "+pathClock, s.auth(s.clock))
	mux.HandleFunc("POST "+pathSession, s.auth(s.open))
	mux.HandleFunc("POST "+pathSession+"/{id}/step", s.auth(s.step))
	mux.HandleFunc("POST "+pathSession+"/{id}/stop", s.auth(s.stopStep))
	mux.HandleFunc("POST "+pathSession+"/{id}/lease", s.auth(s.renew))
	mux.HandleFunc("DELETE "+pathSession+"/{id}", s.auth(s.close))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(maxRequest)
		if r.Method == http.MethodPost && r.URL.Path == pathSession {
			limit = maxOpen
		}
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close") // its body is not read
			problem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request's body is %d bytes: this agent reads at most %d", r.ContentLength, limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		mux.ServeHTTP(w, r)
	})
}

// auth checks the bearer token, in constant time, unless the request's
// address has presented too many wrong ones (s.guesses): then it is
// refused (429) without looking.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ip, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			ip = r.RemoteAddr
		}
		now := time.Now()
		ok, note := s.guesses.allow(ip, now)
		if note != "" {
			s.logf("%s", note)
		}
		if !ok {
			w.Header().Set("Connection", "close") // its body is not read
			w.Header().Set("Retry-After", "1")
			problem(w, http.StatusTooManyRequests, "too many wrong bearer tokens from this address: try again later")
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || s.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
			if note := s.guesses.wrong(ip, now); note != "" {
				s.logf("%s", note)
			}
			w.Header().Set("Connection", "close") // its body is not read
			problem(w, http.StatusUnauthorized, "a valid bearer token is required (the agent's --token-file)")
			return
		}
		h(w, r)
	}
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	host, _ := os.Hostname()
	s.mu.Lock()
	sess, opening := s.sess, s.opening
	s.mu.Unlock()
	h := Health{API: API, Version: s.Version, Host: host, CPUs: runtime.GOMAXPROCS(0), Busy: sess != nil || opening, LeaseS: s.lease().Seconds()}
	if sess != nil {
		h.LeaseLeftS = sess.lease.left().Seconds()
	}
	answer(w, h)
}

func (s *Server) clock(w http.ResponseWriter, _ *http.Request) {
	answer(w, Clock{UnixNano: time.Now().UnixNano()})
}

// maxOpen bounds an Open request: a plan and its users file.
const maxOpen = 64 << 20

// open opens a session: one at a time. The agent is busy from the
// moment it accepts one to open, while it checks the target, without
// holding its lock (the health check answers meanwhile).
func (s *Server) open(w http.ResponseWriter, r *http.Request) {
	// A plan and its users file may take longer to come than another
	// request; the token was checked.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.Conns.readBody(r.ContentLength)))
	var o Open
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		bodyProblem(w, "read the session", err)
		return
	}
	hold(w, openWrite)
	seg := segmentOf(&o)
	if seg.N < 1 || seg.I < 0 || seg.I >= seg.N {
		problem(w, http.StatusBadRequest, fmt.Sprintf("segment %d of %d: want 0 ≤ i < n", seg.I, seg.N))
		return
	}
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		problem(w, http.StatusServiceUnavailable, "the agent is stopping")
		return
	case s.sess != nil || s.opening:
		s.mu.Unlock()
		problem(w, http.StatusConflict, fmt.Sprintf("busy: another coordinator's run is on this agent (it ends when that coordinator closes it, or %v after that coordinator's last heartbeat)", s.lease()))
		return
	}
	s.opening = true
	s.mu.Unlock()
	sess, status, err := s.start(r.Context(), &o, seg)
	s.mu.Lock()
	s.opening = false
	stopped := s.stopped
	if err == nil && !stopped {
		s.sess, s.opened = sess, true
	}
	s.mu.Unlock()
	if err != nil {
		problem(w, status, err.Error())
		return
	}
	if stopped { // Close came while it opened
		s.end(sess, "the agent is stopping")
		problem(w, http.StatusServiceUnavailable, "the agent is stopping")
		return
	}
	s.logf("session %s: segment %d/%d of %s, held while its coordinator's heartbeats come (lease %v)", sess.id, seg.I+1, seg.N, cmp.Or(o.PlanFile, "a plan"), s.lease())
	answer(w, Opened{Session: sess.id, Lease: s.lease()})
}

// start parses the plan, refuses what this agent does not run, and opens
// the run (which checks the target, as ceiling run does).
func (s *Server) start(ctx context.Context, o *Open, seg schedule.Segment) (*session, int, error) {
	dir, err := os.MkdirTemp("", folderPrefix())
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	fail := func(status int, err error) (*session, int, error) {
		os.RemoveAll(dir)
		return nil, status, err
	}
	if o.UsersName != "" {
		// The users file beside the plan, where the plan reads it.
		if filepath.Base(o.UsersName) != o.UsersName || strings.HasPrefix(o.UsersName, ".") {
			return fail(http.StatusBadRequest, fmt.Errorf("users file name %q: want a plain file name", o.UsersName))
		}
		if err := os.WriteFile(filepath.Join(dir, o.UsersName), o.Users, 0o600); err != nil {
			return fail(http.StatusInternalServerError, err)
		}
	}
	if len(o.Plan) > plan.MaxPlanBytes {
		return fail(http.StatusBadRequest, fmt.Errorf("the plan is larger than %d bytes", plan.MaxPlanBytes))
	}
	u, err := usersIn(o.Plan)
	if err != nil {
		return fail(http.StatusBadRequest, fmt.Errorf("the plan (%s, as the coordinator sent it): %w", o.PlanFile, err))
	}
	if u != "" && u != o.UsersName {
		// A plan may name only the users file it brought: not a file of
		// this machine's (an absolute path, a ../).
		return fail(http.StatusForbidden, fmt.Errorf("the plan reads users from %q: an agent reads only the users file its coordinator sends", u))
	}
	p, err := plan.Parse(filepath.Join(dir, "plan.yaml"), []byte(o.Plan))
	if err != nil {
		return fail(http.StatusBadRequest, fmt.Errorf("the plan (%s, as the coordinator sent it): %w", o.PlanFile, err))
	}
	if p.Data.Users != "" && p.Data.Users != o.UsersName {
		return fail(http.StatusForbidden, fmt.Errorf("the plan reads users from %q: an agent reads only the users file its coordinator sends", p.Data.Users))
	}
	if err := s.refuse(p); err != nil {
		return fail(http.StatusForbidden, err)
	}
	sess, err := run.Open(ctx, p, run.Options{Segment: seg, SecondHistograms: true, Version: s.Version, Lifecycle: s.Lifecycle})
	if err != nil {
		status := http.StatusBadGateway // the target, from here
		var bad *failure.InputError
		if errors.As(err, &bad) {
			status = http.StatusBadRequest
		}
		return fail(status, err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	ss := &session{id: hex.EncodeToString(b), run: sess, dir: dir, segment: seg, drain: run.DrainBound(p), ran: map[string]bool{}}
	ss.lease = newLease(s.lease(), func() { s.expire(ss) })
	return ss, 0, nil
}

// refuse says what of a plan this agent will not run.
func (s *Server) refuse(p *plan.Plan) error {
	switch {
	case p.Monitor.Command != "" && !s.AllowCommands:
		return errors.New("the plan's monitor.command would run a command on the agent's machine: refused (start the agent with --allow-commands to allow it)")
	case len(p.Sinks) > 0:
		return errors.New("the plan has sinks, which an agent does not run: delivery accounting needs one machine")
	case len(p.Environment()) > 0:
		return fmt.Errorf("the plan reads environment variables with env (%s): an agent does not hand its own environment to a coordinator's plan", strings.Join(p.Environment(), ", "))
	}
	return s.AllowTargets.refuse(p)
}

// maxStepID bounds a step's id.
const maxStepID = 64

// stepProblem says what makes a step request wrong whatever the agent's
// limits, or "": a step asks for what a plan may (plan.MaxRate,
// plan.MaxVUs, plan.MinStep), and carries an id.
func stepProblem(req *StepRequest) string {
	badRate := func(r float64) bool { return !(r >= 0 && r <= plan.MaxRate) } // NaN too
	switch {
	case req.ID == "" || len(req.ID) > maxStepID:
		return fmt.Sprintf("a step wants an id, unique in its session, of at most %d bytes", maxStepID)
	case req.Index < 0:
		return fmt.Sprintf("step index %d: want 0 or more", req.Index)
	case req.VUs < 0 || req.VUs > plan.MaxVUs:
		return fmt.Sprintf("step %d asks for %d users: want 0 to %d (a plan's most)", req.Index+1, req.VUs, plan.MaxVUs)
	case badRate(req.Rate) || req.Ramp && (badRate(req.RampFrom) || badRate(req.RampTo)):
		return fmt.Sprintf("step %d asks for a rate of %v/s (a ramp from %v/s to %v/s): want 0 to %d/s (a plan's most)", req.Index+1, req.Rate, req.RampFrom, req.RampTo, plan.MaxRate)
	case req.Length < plan.MinStep || req.Warmup < 0:
		return fmt.Sprintf("step %d lasts %v after a warm-up of %v: want at least %v, and no negative warm-up", req.Index+1, req.Length, req.Warmup, plan.MinStep)
	case req.Warmup > math.MaxInt64-req.Length:
		return fmt.Sprintf("step %d lasts %v after a warm-up of %v: too long", req.Index+1, req.Length, req.Warmup)
	}
	return ""
}

// bound checks a step against the agent's limits.
func (s *Server) bound(st load.Step, seg schedule.Segment) error {
	l := s.Limits
	rate := max(st.Rate, 0)
	if st.Ramp != nil {
		rate = max(st.Ramp.From, st.Ramp.To)
	}
	switch share := rate * seg.Fraction(); {
	case l.MaxRate > 0 && st.VUs <= 0 && share > l.MaxRate:
		return fmt.Errorf("step %d asks this agent for %.0f/s, above its --max-rate %.0f/s", st.Index+1, share, l.MaxRate)
	case l.MaxUsers > 0 && seg.Users(st.VUs) > l.MaxUsers:
		return fmt.Errorf("step %d asks this agent for %d users, above its --max-users %d", st.Index+1, seg.Users(st.VUs), l.MaxUsers)
	case l.MaxDuration > 0 && st.Warmup+st.Length > l.MaxDuration:
		return fmt.Errorf("step %d lasts %v, above the agent's --max-duration %v", st.Index+1, st.Warmup+st.Length, l.MaxDuration)
	}
	return nil
}

func (s *Server) step(w http.ResponseWriter, r *http.Request) {
	sess := s.find(r.PathValue("id"))
	if sess == nil {
		problem(w, http.StatusNotFound, "no such session (closed, or expired after being idle)")
		return
	}
	var req StepRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		bodyProblem(w, "read the step", err)
		return
	}
	if msg := stepProblem(&req); msg != "" {
		problem(w, http.StatusBadRequest, msg)
		return
	}
	ahead := time.Until(time.Unix(0, req.StartUnixNano))
	if ahead > maxLead {
		problem(w, http.StatusBadRequest, fmt.Sprintf("the step starts %v from now, more than %v: the coordinator's clock or request is wrong", ahead.Round(time.Second), maxLead))
		return
	}
	st := req.loadStep()
	if err := s.bound(st, sess.segment); err != nil {
		problem(w, http.StatusForbidden, err.Error())
		return
	}
	// A step runs once: the same request again (replayed) is refused.
	sess.stopMu.Lock()
	if sess.ran[req.ID] {
		sess.stopMu.Unlock()
		problem(w, http.StatusConflict, fmt.Sprintf("step %d (id %q): this session already ran a step of that id: a step runs once", st.Index+1, req.ID))
		return
	}
	sess.ran[req.ID] = true
	sess.stopMu.Unlock()
	// The answer comes after the start, the warm-up, the window and the
	// drain; a margin for the figures.
	hold(w, addSat(max(ahead, 0), st.Warmup, st.Length, sess.drain, time.Minute))
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.closed || !sess.lease.renew() {
		problem(w, http.StatusNotFound, "the session closed")
		return
	}
	// The step's context exists before its start: a stop (Ctrl-C at the
	// coordinator) or the lease's end while it waits cuts it short too.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sess.stopMu.Lock()
	if sess.closing {
		sess.stopMu.Unlock()
		problem(w, http.StatusNotFound, "the session closed")
		return
	}
	sess.stop = cancel
	sess.stopMu.Unlock()
	if req.Fresh {
		sess.run.NewUsers()
	}
	// Start at the coordinator's instant, with the other agents.
	if wait := time.Until(time.Unix(0, req.StartUnixNano)); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done(): // stopped, or the coordinator went away: the step measures nothing
		}
	}
	started := time.Now()
	res, start, err := sess.run.Measure(ctx, st)
	sess.stopMu.Lock()
	sess.stop = nil
	sess.stopMu.Unlock()
	if err != nil {
		problem(w, http.StatusInternalServerError, err.Error())
		return
	}
	res.StartS = start.Seconds() // the coordinator lines the agents' steps up on it
	s.logf("session %s: step %d: %d sent, %.1f/s", sess.id, st.Index+1, res.Sent, res.AchievedRate)
	answer(w, StepResult{Step: res, StartedUnixNano: started.UnixNano()})
}

// stopStep cuts the running step short, as a Ctrl-C does on one machine:
// its in-flight requests finish within the grace, and the step answers
// what it measured.
func (s *Server) stopStep(w http.ResponseWriter, r *http.Request) {
	sess := s.find(r.PathValue("id"))
	if sess == nil {
		problem(w, http.StatusNotFound, "no such session")
		return
	}
	sess.lease.renew()
	sess.stopMu.Lock()
	if sess.stop != nil {
		sess.stop()
	}
	sess.stopMu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// renew is a coordinator's heartbeat: its session's lease runs again from
// now. A session that has ended (its lease expired) is not found: the
// coordinator has lost this agent.
func (s *Server) renew(w http.ResponseWriter, r *http.Request) {
	sess := s.find(r.PathValue("id"))
	if sess == nil || !sess.lease.renew() {
		problem(w, http.StatusNotFound, "no such session (closed, or its lease ended: no heartbeat came for "+s.lease().String()+")")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) close(w http.ResponseWriter, r *http.Request) {
	sess := s.find(r.PathValue("id"))
	if sess == nil {
		problem(w, http.StatusNotFound, "no such session")
		return
	}
	s.end(sess, "its coordinator closed it")
	w.WriteHeader(http.StatusNoContent)
}

// find returns the open session of that id, or nil.
func (s *Server) find(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.id != id {
		return nil
	}
	return s.sess
}

// expire closes a session whose coordinator has not been heard from for
// the lease.
func (s *Server) expire(sess *session) {
	s.end(sess, fmt.Sprintf("no heartbeat from its coordinator for %v (its lease)", s.lease()))
}

// end closes a session: it stops its running step, if any, waits for that
// step's end, closes the run and frees the agent for another coordinator.
// The agent stays busy until then. why says what ended it, for the log.
func (s *Server) end(sess *session, why string) {
	sess.stopMu.Lock()
	sess.closing = true
	if sess.stop != nil {
		sess.stop()
	}
	sess.stopMu.Unlock()
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		return
	}
	sess.closed = true
	sess.lease.stop()
	sess.run.Close()
	os.RemoveAll(sess.dir)
	sess.mu.Unlock()
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
	}
	s.mu.Unlock()
	s.logf("session %s: closed: %s", sess.id, why)
	if s.Ended != nil {
		s.Ended()
	}
}

// Close ends the open session, if any; no session opens after it.
func (s *Server) Close() {
	s.mu.Lock()
	s.stopped = true
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		s.end(sess, "the agent is stopping")
	}
}

// used reports whether a coordinator's session has opened on this agent,
// ever, and whether one is opening now.
func (s *Server) used() (opened, opening bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened, s.opening
}

// lease is the sessions' lease: Lease, or DefaultLease.
func (s *Server) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(fmt.Sprintf(format, args...))
	}
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// bodyProblem answers a request whose body could not be read as JSON:
// 413 when it was larger than the agent reads, 400 otherwise.
func bodyProblem(w http.ResponseWriter, what string, err error) {
	status := http.StatusBadRequest
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		status = http.StatusRequestEntityTooLarge
	}
	problem(w, status, what+": "+err.Error())
}

// addSat adds durations, saturating at the largest instead of
// overflowing.
func addSat(ds ...time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		if d > math.MaxInt64-sum {
			return math.MaxInt64
		}
		sum += d
	}
	return sum
}

func problem(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(Problem{Message: msg})
}

// usersIn reads the data.users a plan's YAML names, before it is parsed
// (parsing reads the file), through the plan's own bounded decoder (no
// raw YAML unmarshal: a plan's depth, aliases and merge keys are bounded
// there). A plan that does not decode is an error: it is refused before
// any file it names is read.
func usersIn(text string) (string, error) {
	var p plan.Plan
	if err := plan.Decode("plan.yaml", []byte(text), &p); err != nil {
		return "", err
	}
	return p.Data.Users, nil
}
