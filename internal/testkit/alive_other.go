//go:build !unix

package testkit

import "os"

// alive reports whether the process pid can still be found.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
