// Package metrics records exchanges into HDR histograms and counters without
// a lock or channel shared by all workers, and merges them per second and per
// step.
//
// A Recorder has a fixed set of Shards (four per CPU); worker i records into
// shard i mod n under that shard's own mutex, held for a few tens of
// nanoseconds. So no lock is shared by all workers: a shard's lock is shared
// by the workers of its group and by the once-a-second collector. (A shard
// per worker would cost an HDR histogram per worker, up to 20,000 of them.)
// Collect swaps each shard's Tally for a cleared spare and merges the filled
// one into the caller's Tally, so the hot path does not allocate.
//
// The virtual users' login attempts are tallied apart (Tally.Logins, with
// their own histogram when Layout.Login asks for it), so that they never
// shape a step's figures.
//
// Percentiles are only ever read from merged histograms: never averaged.
// Latencies are recorded in microseconds from 1 µs to 1 h with three
// significant digits; longer values are clamped to the maximum and counted.
//
// A Recorder can also keep a trace (StartTrace): every exchange one by one
// (intended start, response time, outcome), in a buffer each shard
// allocates once, for measuring an event's recovery to the millisecond.
// A full shard keeps one exchange in two from then on, evenly, each
// standing for two (Traced.Weight), so that its memory stays bounded.
//
// Concurrency: Shard.Record is safe for concurrent use (per-shard mutex);
// Collect must be called from one goroutine at a time; a Tally is not safe
// for concurrent use.
package metrics
