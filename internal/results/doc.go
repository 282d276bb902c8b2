// Package results is result.json: the versioned record of a run
// ("ceiling.result/v1"), its types, verdicts and thresholds, written after
// every step through a temporary file and a rename, so a crash or Ctrl-C
// leaves every finished step on disk and never a torn file. Package run
// fills it in step by step; the format depends on no executor.
//
// Histograms are kept encoded (HdrHistogram V2 compressed, base64) so that
// later tools can merge and compare runs without loss.
//
// Concurrency: a Result is owned by one goroutine.
package results
