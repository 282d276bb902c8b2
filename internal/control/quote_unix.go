//go:build unix

package control

import "strings"

// Quote returns s as one word of the shell that runs commands (/bin/sh):
// single-quoted, each quote inside closed, escaped with a backslash and
// opened again. Nothing in it is expanded.
func Quote(s string) (string, error) {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}
