// Package report renders results for people: the step table for the
// terminal, the same table in Markdown in the shape of hand-written load
// test write-ups (with the command that reproduces the run), and the live
// progress line shown while a step runs.
//
// It reads results and progress; it measures nothing.
//
// Concurrency: renderers are functions of their input; a Live writer is used
// from one goroutine at a time.
package report
