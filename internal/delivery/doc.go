// Package delivery matches the message ids a run's accepted iterations
// expect with the ids its sinks received: expected, delivered, lost or
// missing (with the first missing ids), duplicates, send→delivery latency
// (a missing id counted at its wait so far, so that a percentile it
// reaches is a lower bound, with each percentile's upper bound), the
// backlog at a moment, and drain time, per step and for the run.
//
// Virtual users note expected ids through Expect (sharded, so they rarely
// wait on one another); the run polls the sinks' arrivals through Poll,
// Now (the live line, once a second) or Drain. Figures read everything
// under the shards' locks.
//
// Concurrency: Expect and Reject are safe from many goroutines, Poll and
// Now from several (one polls at a time); Drain, Settle, Step, Backlog
// and Series from one at a time.
package delivery
