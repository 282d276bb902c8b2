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
// It imports nothing from the load path: it stands in for a real server.
//
// Concurrency: a Server is safe for concurrent use; Close stops it.
package demo
