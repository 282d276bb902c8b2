package agent

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/load"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/schedule"
)

// API is the control API's version, the first element of its paths: a
// coordinator and an agent of different APIs do not talk.
const API = "v1"

// The API's paths. Every one but health needs the bearer token.
const (
	pathHealth  = "/" + API + "/health"
	pathClock   = "/" + API + "/clock"
	pathSession = "/" + API + "/session"
)

// Health is what GET /v1/health answers, without a token.
type Health struct {
	API     string `json:"api"`
	Version string `json:"version"`
	Host    string `json:"host"`
	CPUs    int    `json:"cpus"`
	// Busy says the agent runs another coordinator's session.
	Busy bool `json:"busy"`
	// LeaseS is how long a session outlives its coordinator's last
	// heartbeat; LeaseLeftS, when busy, how long the session has left
	// unless its coordinator renews it (0: it is closing).
	LeaseS     float64 `json:"lease_s"`
	LeaseLeftS float64 `json:"lease_left_s,omitempty"`
}

// Clock is what GET /v1/clock answers: the agent's wall clock when it
// answered, for the coordinator's round-trip estimate of the offset.
type Clock struct {
	UnixNano int64 `json:"unix_nano"`
}

// Open is POST /v1/session: the plan, as YAML (the coordinator's plan,
// flags applied, without its monitor section), the file it came from
// (for messages), its users file's contents when it has one, and this
// agent's segment.
type Open struct {
	Plan     string `json:"plan"`
	PlanFile string `json:"plan_file"`
	// Users is the users file's contents; the plan reads it as UsersName,
	// a file name beside the plan.
	Users     []byte `json:"users,omitempty"`
	UsersName string `json:"users_name,omitempty"`
	Segment   struct {
		I int `json:"i"`
		N int `json:"n"`
	} `json:"segment"`
}

// Opened is the answer to Open: the session's id, and its lease: the
// coordinator renews it (POST /v1/session/ID/lease, a heartbeat) more
// often than that, or loses the agent.
type Opened struct {
	Session string        `json:"session"`
	Lease   time.Duration `json:"lease_ns"`
}

// StepRequest is POST /v1/session/ID/step: one step, its whole load (the
// agent runs its segment's share), to start at StartUnixNano on the
// agent's clock. Fresh asks for new users and connections first (a
// repeat). ID is the step's, unique in its session (the coordinator
// numbers them): an agent runs a step of an id once, and answers the
// same request again (a replay) 409.
type StepRequest struct {
	ID            string        `json:"id"`
	Index         int           `json:"index"`
	Rate          float64       `json:"rate,omitempty"`
	RampFrom      float64       `json:"ramp_from,omitempty"`
	RampTo        float64       `json:"ramp_to,omitempty"`
	Ramp          bool          `json:"ramp,omitempty"`
	VUs           int           `json:"vus,omitempty"`
	Warmup        time.Duration `json:"warmup_ns"`
	Length        time.Duration `json:"length_ns"`
	StartUnixNano int64         `json:"start_unix_nano"`
	Fresh         bool          `json:"fresh,omitempty"`
}

// stepRequest is the request for st, the wire's own copy of what an agent
// needs of it: the executor's load.Step may change without changing the
// protocol. It carries no trace (an agent's step keeps none); the caller
// sets the id, the start and Fresh.
func stepRequest(st load.Step) StepRequest {
	req := StepRequest{Index: st.Index, Rate: st.Rate, VUs: st.VUs, Warmup: st.Warmup, Length: st.Length}
	if st.Ramp != nil {
		req.Ramp, req.RampFrom, req.RampTo = true, st.Ramp.From, st.Ramp.To
	}
	return req
}

// loadStep is the step req asks the agent to run (its whole load; the
// agent's session runs its segment's share).
func (req *StepRequest) loadStep() load.Step {
	st := load.Step{Index: req.Index, Rate: req.Rate, VUs: req.VUs, Warmup: req.Warmup, Length: req.Length}
	if req.Ramp {
		st.Ramp = &schedule.Linear{From: req.RampFrom, To: req.RampTo, Len: req.Length}
	}
	return st
}

// StepResult is the answer to a step: the figures the agent measured of
// its share, on its session's clock (its start, seconds and trace from
// the session's start: the coordinator lines them up with
// results.Step.LineUp), and when the step really started on its wall
// clock.
type StepResult struct {
	Step            results.Step `json:"step"`
	StartedUnixNano int64        `json:"started_unix_nano"`
}

// Problem is an error answer: what went wrong, said for a person.
type Problem struct {
	Message string `json:"error"`
}

// Error implements error.
func (p *Problem) Error() string { return p.Message }

// segmentOf reads an Open's segment.
func segmentOf(o *Open) schedule.Segment { return schedule.Segment{I: o.Segment.I, N: o.Segment.N} }
