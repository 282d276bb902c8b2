// Package soak says what drifts while a load is held for hours. A
// Recorder takes the load's seconds as they are counted and the watched
// figures of each window as it ends (the target's CPU, memory,
// descriptors, threads and metrics; ceiling's own memory), and keeps:
//
//   - the windows (results.SoakWindow): each one's exchanges counted and
//     response times in one merged histogram, the SLO checked in it; at
//     results.MaxWindows of them, neighbours are merged two by two, so
//     that a day's soak stays a few megabytes. They are on disk while
//     the soak runs (results.WindowFile), each written once: in memory
//     a Recorder keeps only a table of each figure's value in each
//     window, made once with room for every window, so that ceiling's
//     own memory does not grow with the windows (Final reads them back
//     when the soak ends);
//   - each figure's trend over the windows: its Theil–Sen line with the
//     slope's 95 % confidence interval (package trend), and its verdict,
//     STABLE or DRIFTING with the rate; a drifting figure with a known
//     limit (the target's memory limit, its open-file limit, the SLO) is
//     projected to the time its line reaches it; ceiling's own figures
//     are fitted once its memory has settled (OwnSettling);
//   - the episodes, found second by second against a rolling baseline:
//     error bursts and latency spikes with their times, restarts of the
//     target and its death, and the period of those that repeat.
//
// Its result is a results.Soak, which result.json holds and
// results.Result.Judge turns into the run's outcome: the one place a run
// passes or fails. It does not run the load nor read the target (package
// run does both, and hands their figures here), and it keeps no clock of
// its own: every time is given, in seconds from the soak's start, so that
// its tests feed it made-up hours in milliseconds.
//
// Concurrency: a Recorder is used by one goroutine at a time.
package soak
