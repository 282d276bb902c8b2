// Package demo is the built-in target that `ceiling demo` loads: a small
// HTTP service with real, explainable bottlenecks.
//
// Each POST /send is a job for a fixed number of worker lanes; a job holds a
// lane for a fixed service time, so capacity is lanes ÷ service time (four
// lanes of 5 ms: 800 jobs a second). Jobs wait in a bounded queue; a full
// queue answers 503 at once. Below capacity latency is the service time;
// past it the queue fills, latency climbs to queue ÷ capacity and then the
// 503s start: the hockey stick every load test looks for.
//
// GET /burn?ms=N is bound by CPU instead: each request does a fixed amount
// of work, N ms of one core (default 5, at most 1000), calibrated once per
// process as a count of rounds rather than timed by the clock, so that
// under a CPU quota throughput follows the quota (burn.go says why).
//
// The same server carries a small chat backend (a
// chat widget whose visitor messages are saved and posted on to Slack).
// Messages come in as frames on widget websockets (GET /widget) or as
// POST /api/sites/{site}/messages, and every one takes the same path: the
// site's flood brake, a save in the store, the ack, and, when a webhook is
// set, a job that posts the message to it. Its limits, and why:
//
//   - Delivery to the webhook: JobLanes lanes, each holding one post until
//     the webhook answers. Capacity is lanes ÷ webhook latency, whatever the
//     CPU: 8 lanes and a 50 ms webhook make 160 posts a second (an
//     8-slot chat lane posting to Slack caps near 140 a second). Past it
//     the job queue grows (demo_queue_depth), messages arrive late, and a
//     full queue drops jobs: lost messages. A 429 is obeyed (Retry-After, at
//     most 5 s) and holds its lane while it waits.
//   - Saves: one writer at a time, like SQLite. In memory a save is a map
//     lookup and a ring append, far below a millisecond. The file store
//     also appends a JSON line per save; with sync "full" it waits for
//     fsync under the writer lock, so saves a second are at most 1 ÷ fsync
//     time (a disk that syncs in 2 ms: 500 a second), and everything else
//     that saves queues behind it (demo_save_seconds). With sync "normal"
//     (the default, like SQLite's synchronous=NORMAL) a background fsync
//     runs at most once a second: a crash of the process loses nothing
//     that was saved, a power cut can lose the last second.
//   - The flood brake: a token bucket per site, 600 messages at once and
//     then 10 a second ("600 messages a minute, 10 a second").
//     One site cannot get past 10 a second for long; to load the backend
//     harder, spread messages over many sites. Widget frames that name no
//     site (no "site" field, no ?site=) are saved under "default" and not
//     braked: they are no site's flood, and the plans and benchmarks that
//     predate the brake send them.
//
// Memory stays bounded over a long run: a site keeps its newest 200
// messages, the store 1000 sites (so at most 200,000 messages), the
// duplicate index the newest 200,000 (site, clientId) pairs over all sites,
// the job queue JobQueue jobs.
//
// The same server also carries the small API the example plans load
// (docs/examples): a login that hands out bearer tokens, message listing,
// instance status and message sends with idempotency keys and a
// per-project rate limit answering 429 (a messaging gateway's API), and HTML
// pages that need a session cookie and otherwise redirect to /login (a
// SaaS app's). GET /stats and GET /metrics (Prometheus text) report the figures.
// `ceiling demo-target` serves it in the foreground; docs/demo-target.md
// describes the endpoints.
//
// It imports nothing from the load path: it stands in for a real server.
//
// Concurrency: a Server is safe for concurrent use; Close stops it, ending
// widget sockets and webhook posts in flight without waiting for the
// backlog.
package demo
