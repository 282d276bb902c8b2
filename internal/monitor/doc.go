// Package monitor watches the system under test while ceiling loads it.
//
// Three things can be watched, and they combine:
//
//   - a process tree (Process): a PID and all its descendants, found anew on
//     every reading by walking the PPid links in /proc. CPU time, RSS
//     (from statm, which matches VmRSS; stat's rss field reads low), threads
//     and open file descriptors are summed over the tree;
//   - a cgroup (Cgroup), v1 or v2: CPU usage and memory are read from the
//     controller files instead, for targets such as containers whose
//     processes are not one tree;
//   - a Prometheus text endpoint (Scraper): selected series, gauges summarised
//     by last, max and mean, counters by their rate per second.
//
// A Watcher takes a reading from an optional Source and an optional Scraper
// every interval on its own goroutine and keeps every reading in memory (one
// an interval: an hour at 1 Hz is 3,600 small records). Window summarises a
// time range, typically one load step, into Figures; Series gives per-reading
// points for plots.
//
// Launch starts a command target itself: in its own process group, with its
// output in a log file, waiting until a ready URL answers, and Target.Stop
// ends the group (SIGTERM, then SIGKILL after a grace period).
//
// What it does not do: it does not shell out (everything is read from /proc,
// /sys/fs/cgroup and HTTP), it does not set cgroup limits (that is the sweep
// launcher's job), and it does not judge the figures (that is slo's).
// Sampling is cheap: a Process reading lists /proc and reads the PPid from
// every process's stat with one short read (about 5 µs each), then stat,
// statm and an fd count for each process of the tree: about 0.4 ms with 70
// processes on the machine, 0.04 % of a core at 1 Hz.
//
// Platforms: Process and Cgroup read /proc and /sys/fs/cgroup, so they work
// on Linux only; elsewhere they return an error matching
// errors.ErrUnsupported, and CPULimit counts the cores (runtime.NumCPU).
// Launch and the Scraper work everywhere ceiling builds, but on Windows the
// command runs through cmd.exe and Stop kills only that shell, not the
// processes it started (see Target.Stop).
//
// Concurrency: a Source and a Scraper are each read by one goroutine at a
// time (the Watcher's); they are not safe for concurrent Read or Scrape
// calls. A Watcher's Start and Stop are called by its owner; Window and
// Series are safe to call from any goroutine at any time, including while it
// samples. A Target's methods are safe for concurrent use.
package monitor
