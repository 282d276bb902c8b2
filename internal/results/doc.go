// Package results is result.json: the versioned record of a run
// ("ceiling.result/v1"), its types, verdicts and thresholds, written after
// every step through a temporary file and a rename, so a crash or Ctrl-C
// leaves every finished step on disk and never a torn file. Package run
// fills it in step by step; the format depends on no executor.
//
// Histograms are kept encoded (HdrHistogram V2 compressed, base64) so that
// later tools can merge and compare runs without loss. A step with events
// keeps its exchanges one by one around them (Trace, varints in base64),
// and the events' windows and recovery are computed from it, to the
// millisecond, each time the result is judged (CostEvents).
//
// Concurrency: a Result is owned by one goroutine.
package results
