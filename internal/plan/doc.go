// Package plan reads, defaults and validates plan files: the YAML that says
// what to load, how hard and for how long, and what each iteration sends.
//
// Parse (and LoadFile, which reads the file first) reports every problem at
// once as Problems, each with file:line:col and the field path, e.g.
// "plan.yaml:7:10: load.rates[2]: want a positive rate per second, not -5".
// Unknown keys are problems too, with the nearest known key as a hint. A
// parsed Plan remembers where each field was written, so other packages can
// place their own errors with Plan.Where. Validate fills defaults and checks
// values; the cli calls it on plans built from quick flags, which it parses
// with ParseRates, ParseVUs, ParseDuration and ParseHeader.
//
// Scenarios form a weighted mix; each is a single request, a flow of steps
// or a WebSocket scenario (frames sent over held sockets, each timed to its
// ack), and a login flow may run once per virtual user. Validate checks
// their requests, checks, extractions and WebSocket settings, parses every
// template (URLs, header values, bodies, json strings, frames, vars, tags)
// with ParseTemplate and TemplateFuncs, checks the fields each template
// reads against the users' columns, the vars and the extracted names, and
// reads data.users, whose rows Users returns.
//
// A validated Plan can say how many steps it has and how long it will run
// before any request goes out (Steps, Duration), and resolves each request's
// URL and headers (RequestURL, RequestHeaders) and each WebSocket scenario's
// (WebSocketURL, WebSocketHeaders).
//
// Sinks are mock outside services the target calls (latency fixed or by
// percentiles, error rate, a per-key rate limit whose key
// SinkRateLimit.Key gives in the sink package's form, where the message id
// is); a scenario's Delivery names a sink and the id template its accepted
// iterations expect to arrive there. Validate fills the sinks' defaults and
// checks both, ids as templates.
//
// A plan also carries the thresholds of the step verdicts (Verdict, with
// ceiling's defaults filled in by Validate) and whether validity warnings
// fail the run (Strict, nil for the command's default).
//
// It does not send requests or frames, execute templates (TemplateFuncs holds stubs;
// the runner binds real functions per virtual user), evaluate SLO
// expressions, checks or extraction, or judge steps; the cli turns a Plan
// into executors.
//
// Concurrency: a Plan is read-only once validated and may be shared;
// Validate itself writes defaults and reads data.users, and must not run
// concurrently with readers. TemplateFuncs must not be modified.
package plan
