// Package run is a run as a library: it opens a session from a validated
// plan (the sinks, the watched target, the transport, a preflight request,
// the websocket sockets), runs steps on it (the plan's stairs, or the levels
// a search picks), turns each step's figures, with the target's, the
// deliveries' and the sockets' over its window, into result.json's step,
// judges it, and writes the result after every step, then finishes it
// (late deliveries, the final judgement).
//
// All mapping from plan keys to the lower layers' configuration is here
// (config.go): steps, worker caps, timeouts, verdict rules, the transport.
// Everything that is "many runs" (repeats, sweeps) or "a run driven from
// elsewhere" (agents) is built on a Session, never by copying what it does.
//
// It prints nothing and never exits: what consumes the run as it goes
// (result.json, live series, JUnit, the terminal's line) is an Output in
// Options (output.go), notes go to Options.OnNote, and errors are typed
// for the caller to turn into exit codes:
// an failure.InputError is a bad plan, failure.ErrUnreachable a target that did not answer
// the preflight, failure.ErrInterrupted a cancelled context, failure.ErrTargetDied (a
// TargetDiedError) a command target that ended on its own mid-run (the
// step under way was cut there and the run stopped, died.go); anything
// else stopped the run from being carried out.
//
// Concurrency: a Session is used by one goroutine; its outputs' Second and
// Progress run on the running step's collector goroutine, everything else
// on the session's.
package run
