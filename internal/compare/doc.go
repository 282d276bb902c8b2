// Package compare decides whether a run (B) differs from a baseline (A)
// beyond the noise, and renders the answer as text, Markdown or JSON (its
// HTML page, with plots, is drawn by package report, which sits above).
//
// For every matched step (by index; by target rate or users for find
// results) and, when a step has several scenarios, every scenario, it
// compares throughput, p50, p95, p99 and error rate. Which test decides
// whether a change is significant depends on how many repeats each side
// has (results.Repeat):
//
//   - 5 or more per side: the Mann-Whitney U rank test, as benchstat does
//     (golang.org/x/perf/benchmath), at α = 0.05;
//   - 2 to 4: the CoV rule: the change must exceed CoVFactor times the
//     larger side's coefficient of variation;
//   - single runs: no noise estimate; deltas only, never significant.
//
// Whatever the test, a change counts only when it also exceeds a minimum
// effect (5 % by default), so that many comparisons do not cry wolf by
// chance, and a latency only when it also moves by its floor (1 ms, 1 %
// of its p50 or the histogram's resolution, whichever is largest); the
// report says how many comparisons were made. A control scenario (the
// plan's control) whose latency (or, run alone, throughput) moved between
// A and B by the same rules marks the host busy: then no other change is
// called significant, those that would have been are marked suppressed,
// and the verdict is unknown (CouldNotTell).
//
// compare reads results and nothing else: it depends on no executor.
//
// Concurrency: everything here is pure; a Report is owned by its caller.
package compare
