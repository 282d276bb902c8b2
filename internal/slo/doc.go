// Package slo parses and evaluates thresholds such as "p99<200ms, errors<1%".
//
// Grammar (whitespace between tokens is free):
//
//	slo    = term { "," term }
//	term   = [ name "." ] metric op value
//	metric = "p50" | "p90" | "p95" | "p99" | "p999" | "max" | "mean"   (value: a duration, "200ms")
//	       | "delivery_p50" | "delivery_p99"                           (send → delivery at a sink, "2s")
//	       | "errors" | "limited" | "delivered"                         (value: a percentage, "1%")
//	       | "rate"                                                     (value: achieved ÷ target, "0.95"; open model only)
//	       | "throughput"                                               (value: responses per second, "50/s")
//	       | "recovery"                                                 (the run's events: the worst one's recovery, "5s"; no name)
//	op     = "<" | "<=" | ">" | ">="
//
// A threshold evaluated on zero completed exchanges fails: no evidence is not
// a pass. Likewise a recovery term in a run without events, and an event
// that did not recover fails it whatever its bound. A recovery term is
// judged over all the run's events (Term.OfEvents), not in each step. Parse errors carry the byte offset of the problem.
//
// Concurrency: parsed thresholds are immutable.
package slo
