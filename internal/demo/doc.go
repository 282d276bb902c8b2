// Package demo is the built-in target that `ceiling demo` loads: a small
// HTTP service with a real, explainable bottleneck.
//
// Each POST /send is a job for a fixed number of worker lanes; a job holds a
// lane for a fixed service time, so capacity is lanes ÷ service time (four
// lanes of 5 ms: 800 jobs a second). Jobs wait in a bounded queue; a full
// queue answers 503 at once. Below capacity latency is the service time;
// past it the queue fills, latency climbs to queue ÷ capacity and then the
// 503s start: the hockey stick every load test looks for.
//
// The same server carries the small API the example plans load
// (docs/examples): a login that hands out bearer tokens, message listing,
// instance status and message sends with idempotency keys and a
// per-project rate limit answering 429 (the shapes of seed 002), and HTML
// pages that need a session cookie and otherwise redirect to /login (seed
// 003). `ceiling demo-target` serves it in the foreground.
//
// It imports nothing from the load path: it stands in for a real server.
//
// Concurrency: a Server is safe for concurrent use; Close stops it.
package demo
