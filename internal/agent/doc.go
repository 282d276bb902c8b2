// Package agent is the distributed run: `ceiling agent` and the
// coordinator that drives agents.
//
// Server is an agent. It serves a small versioned HTTP/JSON control API
// (paths under /v1): a health check without a token, and, behind a bearer
// token compared in constant time (wrong ones throttled by address and
// logged: guesses.go), the clock, opening a session (a plan
// and this agent's segment of the load), renewing its lease (a heartbeat),
// running one step of it at a given instant, stopping that step, and
// closing the session. It runs one coordinator's session at a time, held
// by a lease that the coordinator's heartbeats renew: a session whose
// coordinator falls silent for the lease (Server.Lease) has its step
// stopped and is closed, and the agent is free for another. It runs the
// session with the same engine as `ceiling run`
// (run.Session.Measure), and refuses what would reach beyond the load: a
// plan that starts commands (unless AllowCommands), sinks, a users file it
// was not sent, a plan that sends load outside AllowTargets, steps beyond
// a plan's own maxima or its Limits, and a step id it already ran (a
// replay). What one client holds of it is bounded (Conns: timeouts for
// reading, writing and idling, bodies bounded, connections per IP
// address capped); its lock is never held while a session opens or a
// step runs, so the health check answers at once. A session's folder is
// named after the agent's pid: RemoveStale removes those of agents that
// died.
//
// Coordinator is the other side, a run.Remote: Connect checks every agent
// (API, version, clock offset from the shortest of five round trips) and
// opens the plan on each as segment i of N; Step starts every agent's
// share at one instant on its own clock, lines their steps up on this
// run's clock (results.Step.LineUp: seconds and trace) and merges them
// with results.MergeSteps; it renews every agent's lease from its own
// goroutine, and waits (up to Options.Wait) for an agent that another
// coordinator holds. An agent that stops answering during a step is lost:
// the merged step keeps the planned load, lists the lost shares and warns,
// and the error matches failure.ErrAgentLost.
// The session on top (package run) judges, searches and writes as on one
// machine.
//
// ServeFlags and Flags are the commands' flags: Serve runs an agent (with
// --once, one run, given up after --idle-timeout when no coordinator
// came), and Flags.Apply connects run, find or sweep to agents (or sets a
// --segment). Hold keeps a coordinator's result.json served after the run
// (--hold-result), its size and SHA-256 first, until a client with the
// token fetches and releases it: a coordinator in a Kubernetes pod, whose
// files die with it.
//
// Concurrency: a Server serves requests concurrently; a session runs one
// step at a time; a lease's timer expires it from a goroutine of its own.
// A Coordinator is used by one goroutine (the session's); its heartbeats
// run in one goroutine per agent, from the agent's session opening to
// Close, which waits for them.
package agent
