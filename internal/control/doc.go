// Package control starts the target and acts on it: what ceiling does to
// the system under test, where package monitor only watches it.
//
// Launch starts a command target itself: in its own process group, with its
// output in a log file, waiting until a ready URL answers, and Target.Stop
// ends the group (SIGTERM, then SIGKILL after a grace period). Target.Pause,
// Resume and Kill act on the group for the plan's events, and
// Target.WaitListening waits until the target's own process tree listens
// on its ports (monitor.ListeningPorts): a rolling deploy's new copy, told
// apart from the old copy that answers on the same port. Target.Done and
// Target.Died tell a target that ended on its own (an exit, a crash, the
// OOM killer: its Exit, with its status or signal) from one ceiling ended.
// RunCommand runs a command, or a program (LaunchConfig.Argv), to its end
// the same way (an event's command, a sweep's setup and its container
// engine's commands), and WaitReady waits for a target something else
// started. Quote writes a value as one word of the shell commands run
// through.
//
// A Lifecycle, made once by the program and handed down in options, keeps
// the targets launched with it until they are stopped, and the undoing of
// what was changed outside them (AtAbort); its Abort kills and undoes them
// all at once, for a second Ctrl-C. There is no process-wide registry.
//
// A target ceiling did not start (the plan's monitor.pid, monitor.cgroup)
// is acted on with SignalTree, PauseTree, ResumeTree and KillTree, which
// reach the process and every process below it (monitor.Tree), and with
// LimitCPU, which writes a CPU quota on its cgroup and gives back the
// function that puts the old one back.
//
// What it does not do: it measures nothing (that is monitor's), and it
// does not set up a sweep's cgroups or containers (that is sweep's, which
// runs its commands with RunCommand and registers their removal with a
// Lifecycle).
//
// Platforms: Launch and RunCommand work everywhere ceiling builds. On Unix
// a target runs in its own process group, stopped, paused and killed as a
// group; on Linux the group also dies with ceiling, however ceiling dies (a
// parent-death signal on the shell that keeps the group). On Windows the
// command runs through cmd.exe and Stop kills only that shell, not the
// processes it started (see Target.Stop), and Pause and Resume return an
// error matching errors.ErrUnsupported. The tree signals need Unix and
// /proc, and LimitCPU cgroups: elsewhere they return an error matching
// errors.ErrUnsupported.
//
// Concurrency: a Target's and a Lifecycle's methods are safe for
// concurrent use.
package control
