// Package flaggroup files command-line flags under the headings `--help`
// lists them by ("Load flags:", "Output flags:"): the groups, their order,
// and In, with which a package that registers flags files each one next to
// the flag itself.
//
// It does not register or parse flags (the packages that own a command's
// configuration do), nor print help (cli does, reading the annotation In
// sets). It imports no package of ours, so that every layer may use it.
//
// Concurrency: In writes to the flag set it is given, as registering a
// flag does; the rest is constants.
package flaggroup
