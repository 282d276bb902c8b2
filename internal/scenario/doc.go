// Package scenario runs what a plan's iterations do: it compiles the plan's
// scenarios (weighted single requests and flows of steps, templates, JSON
// bodies, checks, extraction, tags, data rows, a login flow) once, and runs
// one iteration at a time for a virtual user.
//
// A Set is the compiled plan, shared by every virtual user. A VU is one
// virtual user's state: its transport session and cookie jar, its row of
// data, its random source and template clones (so uuid, randInt and friends
// need no lock), and what its login extracted. Iterate picks a scenario by
// weight from a number the executor supplies (a hash of the run's seed and
// the arrival's index, so a mix is reproducible), renders its requests,
// performs them, checks and extracts, and hands every exchange and the
// iteration's outcome to a Recorder. A user's login is recorded apart
// (Recorder.Login, one call per attempt, never as exchanges), and a failed
// one is retried after a backoff, never at once.
//
// A request with no template is built once and sent as a static request
// whose wire form the transport caches; templates are parsed once, at
// Compile, never on the hot path.
//
// Concurrency: a Set is safe for concurrent use; a VU belongs to one
// goroutine at a time.
package scenario
