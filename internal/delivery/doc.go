// Package delivery matches the message ids a run's accepted iterations
// expect with the ids its sinks received: expected, delivered, lost (with
// the first lost ids), duplicates, send→delivery latency and drain time,
// per step and for the run.
//
// Virtual users note expected ids through Expect (sharded, so they rarely
// wait on one another); one goroutine polls the sinks' arrivals through
// Poll or Drain. Figures read everything under the shards' locks.
//
// Concurrency: Expect and Reject are safe from many goroutines; Poll,
// Drain, Step and Series from one at a time.
package delivery
