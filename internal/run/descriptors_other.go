//go:build !unix

package run

// descriptors returns zero for both: Windows sets no limit on a process's
// sockets short of its memory, and other systems are not measured.
func descriptors() (limit, conns int) { return 0, 0 }
