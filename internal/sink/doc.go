// Package sink is the mock outside service: an HTTP server that behaves like
// an API the target calls (a Slack or Discord webhook, a payment or mail
// API) and keeps a ledger of which message ids arrived and when, so that
// ceiling can tell whether every message the target accepted was actually
// delivered.
//
// A Sink answers every path and method, after a configured latency (fixed,
// or drawn from a percentile table), with a configured share of 500s, and
// with 429 plus Retry-After past a per-key rate limit (a token bucket with
// burst 1 per JSON field or header value, as Slack allows about one post a
// second per channel). It reads at most 1 MiB of each body (past it, 413)
// and finds the message id in it by gjson path or regular expression. Every
// request that carries an id is handed to the reader (the delivery package,
// through Arrivals) with its arrival time and the status it was answered
// with, whatever that status: a 429 or 500 is not a delivery, and the
// reader decides what counts. The paths under /__ceiling/ are reserved:
// GET /__ceiling/stats serves Stats as JSON and GET /__ceiling/metrics
// serves them in the Prometheus text format, so a sink can be watched like
// any target.
//
// It does not retry, forward, persist or match anything: matching sent ids
// against arrivals is the delivery package's job. It imports nothing from
// the load path, because it stands in for a real server.
//
// Memory stays bounded however long it runs. To count ids and duplicates
// it remembers each distinct id as a 12-byte fingerprint (25 to 40 bytes of
// heap an id with the map around it, whatever the id's length), up to
// Options.MaxIDs (DefaultMaxIDs, ten million); past that, arrivals of ids
// it does not remember are counted as unchecked and Stats warns that ids
// and duplicates are incomplete. An arrival's id, time and status are kept
// only until the reader's next call to Arrivals (about 50 bytes each, at
// most MaxUnread of them; 4096 until a reader first calls, so a sink
// nobody reads keeps none beyond that). No body or header is kept.
//
// Latency and error draws are deterministic for a given Seed: request n (in
// the order requests finish reading their bodies) gets its draws from a
// SplitMix64 stream at n, so no generator is shared under a lock.
//
// Concurrency: a Sink is safe for concurrent use. No lock is held while a
// request waits out its latency; recording an arrival is a short critical
// section and the rate limiter is sharded by key. Arrivals has one reader:
// each arrival is handed over once. Close stops the server, cuts in-flight
// latencies short (those requests are answered at once with the status
// already decided and recorded), waits for the handlers, and may be called
// more than once. Arrivals and Stats remain readable after Close.
package sink
