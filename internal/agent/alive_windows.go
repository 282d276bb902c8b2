package agent

import "os"

// alive reports whether a process of that pid runs: Windows opens a
// process that exists, and no other.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
