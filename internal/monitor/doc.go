// Package monitor watches the system under test while ceiling loads it.
//
// Three things can be watched, and they combine:
//
//   - a process tree (Process): a PID and all its descendants, found anew on
//     every reading by walking the PPid links in /proc. CPU time, RSS
//     (from statm, which matches VmRSS; stat's rss field reads low), threads
//     and open file descriptors are summed over the tree, and the tree's
//     main process (the one holding most of its memory) is followed, so
//     that a server a supervisor starts again counts as a restart;
//   - a cgroup (Cgroup), v1 or v2: CPU usage and memory are read from the
//     controller files instead, for targets such as containers whose
//     processes are not one tree;
//   - a Prometheus text endpoint (Scraper): selected series, gauges summarised
//     by last, max and mean, counters by their rate per second.
//
// A Watcher takes a reading from an optional Source and an optional Scraper
// every interval on its own goroutine. It keeps the readings of the source
// (one an interval: an hour at 1 Hz is 3,600 small records), the older
// ones thinned past a bound (thin.go: four hours at 1 Hz, or less with
// Keep), and the scraped values in a history of bounded size: recent
// readings one by one, older ones folded into summaries that merge
// exactly (history.go). Window summarises a time range, typically one load
// step, into Figures; Series gives per-reading points for plots.
//
// The limits a target runs into are read where the kernel keeps them:
// CPULimit (affinity, CPU quotas), MemoryLimitOf (the cgroup memory limit,
// with the group's working set, which is what reaches it, and the OOM
// killer's count of kills there) and OpenFileLimit (the process's
// `ulimit -n`); CPUQuotaDirs says where a CPU quota is kept, for the event
// that changes it (control.LimitCPU).
//
// Scraping is bounded so that no endpoint can take ceiling down or steal
// the load's CPU: a scrape, answer and parsing, ends within the timeout and
// within three quarters of the interval; a body over MaxScrapeBytes fails
// the scrape unparsed; only the families a selector may want are parsed,
// a few thousand lines at a time (lines.go); each selected metric keeps at
// most MaxSeriesPerMetric series, the same ones every scrape; and after a
// slow scrape the next ones wait, so that scraping takes at most a tenth
// of the time. A failed scrape is counted and its error kept
// (Figures.ScrapeErrors, ScrapeError), never read as zeros; what the
// figures lack is said in Figures.Warnings.
//
// ListeningPorts tells which ports a process tree itself listens on (its
// descriptors' socket inodes against /proc/PID/net/tcp and tcp6), and Tree
// lists a process tree: what package control needs to wait for a new copy
// of a server and to signal a tree it did not start. Starting, stopping,
// signalling and limiting the target is control's; monitor only watches.
//
// What it does not do: it does not shell out (everything is read from /proc,
// /sys/fs/cgroup and HTTP), it does not start, signal or limit the target
// (that is package control's, and a sweep launcher's cgroup limits are
// sweep's), and it does not judge the figures (that is slo's).
// Sampling is cheap: a Process reading lists /proc and reads the PPid from
// every process's stat with one short read (about 5 µs each), then stat,
// statm and an fd count for each process of the tree: about 0.4 ms with 70
// processes on the machine, 0.04 % of a core at 1 Hz.
//
// Platforms: Process, Cgroup, ListeningPorts and Tree read /proc and
// /sys/fs/cgroup, so they work on Linux only; elsewhere they return an
// error matching errors.ErrUnsupported, and CPULimit counts the cores
// (runtime.NumCPU). The Scraper works everywhere ceiling builds.
//
// Concurrency: a Source and a Scraper are each read by one goroutine at a
// time (the Watcher's); they are not safe for concurrent Read or Scrape
// calls. A Watcher's Start and Stop are called by its owner; Window and
// Series are safe to call from any goroutine at any time, including while it
// samples.
package monitor
