//go:build !unix

package control

import (
	"fmt"
	"strings"
)

// Quote returns s as one word of the shell that runs commands (cmd.exe):
// double-quoted. cmd.exe expands %NAME% and ends a quote at a '"' even
// inside quotes, so a value holding either (or a line break) is refused:
// the environment variable that holds it is the safe way.
func Quote(s string) (string, error) {
	if strings.ContainsAny(s, "\"%\r\n") {
		return "", fmt.Errorf("%q holds a character cmd.exe cannot quote (\", %%, a line break)", s)
	}
	return `"` + s + `"`, nil
}
