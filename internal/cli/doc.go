// Package cli is the ceiling command: its subcommands, flags, exit codes and
// hints. It is the only package that reads arguments, writes to the
// terminal and decides the exit code; cmd/ceiling calls Main and exits with
// what it returns.
//
// Errors travel up as Go errors that carry an exit code (see ExitCode);
// anything else is an internal failure, exit 3.
//
// Concurrency: Main runs one command; the context it gets is cancelled on the
// first interrupt.
package cli
