// Package load runs steps: the open model (arrivals on a schedule, latency
// from the intended start) and the closed model (virtual users that wait for
// each response).
//
// A step is a warm-up followed by a counted window. Every exchange records
// its intended, start and end offsets from the run's one monotonic base:
// response time = end − intended (the headline), service time = end − start,
// schedule lag = start − intended. Only exchanges intended inside the window
// are counted; after the window ends the step waits for its in-flight
// exchanges (each bounded by the transport timeout) so that a stall at the
// end of a step shows in that step's percentiles instead of vanishing.
//
// Open model: one goroutine walks the schedule with one reused timer and
// hands each arrival to an idle worker without blocking; when none is idle
// it starts a worker, up to a cap; past the cap the arrival waits for a
// worker, its lag shows in its latency and it is counted late. Closed model:
// N goroutines loop request → response → think.
//
// Steps whose scenarios are all one fixed request (scenario.Set.Fixed) run
// on the event loop instead when the Config has one (loop.go): the
// scheduler sends each arrival itself and waits in the loop's Poll, which
// ends the exchanges whose answers came; past the connection cap arrivals
// queue, late. The closed model's users are then tags on the loop, each
// sending its next request as its last one is recorded. Both engines count,
// time and drain a step the same way.
//
// Stopping is two-level: cancelling the context stops new work at once, and
// in-flight exchanges get Config.Grace to finish before the step returns what
// it has. No goroutine of a step outlives it: work still in flight when the
// drain (or the grace) ends is given up on (iterations stop before their
// next request or frame, and sessions that can be aborted are), and the
// step returns once every worker has, so a virtual user is never used by
// two workers. Nothing here exits the process or prints.
//
// Concurrency: a Runner runs one step at a time; its OnTick callback runs on
// the step's collector goroutine.
package load
