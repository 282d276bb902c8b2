// Package cli is the ceiling command: its subcommands, flags, exit codes and
// hints. It parses the arguments it is given (the packages that own a
// command's configuration register its flags), writes to the writers it is
// given and decides every command's exit code; cmd/ceiling calls Main with
// the process's arguments, streams and control.Lifecycle, and exits with
// what it returns, or with 130 at a second interrupt, after aborting that
// lifecycle.
//
// It owns no run logic: it builds a plan from a file and the flags, opens a
// run.Session with the outputs the flags ask for, and prints what the
// session returns (the live progress, the table, find's answer).
//
// Errors travel up as Go errors that carry an exit code (see ExitCode);
// the error kinds of package failure get theirs from their type
// (runError).
//
// Concurrency: Main runs one command; the context it gets is cancelled on the
// first interrupt.
package cli
