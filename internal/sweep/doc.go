// Package sweep is the configuration matrix of `ceiling sweep` and the
// means to start a target under each configuration: which shape (workers ×
// CPUs × memory) serves the load best.
//
// A Config is one shape. ParseConfigs reads the seed's flag form
// ("2@1/512m 4@2/1g": workers@cpus/memory) and Matrix expands a sweep
// file's product of axes, in a stable order, so that a configuration's ID
// names the same shape from one sweep to the next.
//
// Limits is the local launcher's cgroup: NewLimits creates a group and
// writes its CPU quota and memory limit directly (cgroup v2 cpu.max and
// memory.max, or v1 cpu.cfs_quota_us and memory.limit_in_bytes, whichever
// the machine has), Prefix or Add puts the target in it, Path is what
// monitor.Cgroup watches, and Remove deletes the group. Without a usable
// controller (not root, read-only, none enabled, not Linux) NewLimits'
// error matches ErrNoController, and the caller runs the target without
// limits.
//
// A Launcher starts the target under one shape and stops it after: Local
// (a command in its Limits, or pinned to whole CPUs without them),
// Container (docker or podman run with --cpus and --memory) and Commands
// (the user's own apply and teardown: Helm, kubectl). A File is a sweep
// file (the plan inline or by path, the launcher, configs or a matrix, the
// mode); Flags are the command's flags, which build a Spec from a file, the
// flags, or both.
//
// Run runs a Spec: for each shape it renders the templates with the
// shape's Values (a free port included; Substitute for whole files,
// leaving the plan's own templates alone), starts the target with the
// Launcher, runs the plan's stairs or finds its edge through internal/run,
// stops the target, and writes sweep.json (a Result: every shape's Row,
// the best, the lessons) after every shape; with Resume it keeps the
// shapes an earlier sweep.json finished. Text and Markdown render the
// sweep table; HTML renders it as a page with the throughput and p95 of
// every shape as bar charts, the best marked, and WriteHTML writes that
// page to a file. Limits never kills a process: the run stops its target
// before Remove.
//
// Concurrency: Configs are values. A Limits and a Run are used by one
// goroutine.
package sweep
