// Package cli is the ceiling command: its subcommands, flags, exit codes and
// hints. It is the only package that reads arguments, writes to the
// terminal and decides the exit code; cmd/ceiling calls Main and exits with
// what it returns.
//
// It owns no run logic: it builds a plan from a file and the flags, opens a
// run.Session with the outputs the flags ask for, and prints what the
// session returns (the live progress, the table, find's answer).
//
// Errors travel up as Go errors that carry an exit code (see ExitCode);
// run's errors get theirs from their type (runError).
//
// Concurrency: Main runs one command; the context it gets is cancelled on the
// first interrupt.
package cli
