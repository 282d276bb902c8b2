// Package report renders results for people: the step table for the
// terminal, the same table in Markdown in the shape of hand-written load
// test reports (with the command that reproduces the run), one
// self-contained HTML page with the tables and plots (inline SVG, no
// script), the live progress line shown while a step runs, and find's
// one-line answer and the demo's story of what broke first; and a
// comparison's HTML page (CompareHTML: both runs against the load, the
// table of changes), compare's own formats beside it in CompareFormats.
// Other reports' pages are built from its parts: Page (the page and its
// style sheet), HTMLTable, Bars (a bar chart as inline SVG) and WriteFile
// (a page written whole or not at all).
//
// It takes values (a result, a search's outcome, a step's progress); it
// measures nothing and depends on no executor, so a result from any run,
// agent or merge renders the same.
//
// Concurrency: renderers are functions of their input; a Live writer is used
// from one goroutine at a time.
package report
