package monitor

import "golang.org/x/sys/unix"

// affinity counts the CPUs process pid may run on (sched_getaffinity: set
// by taskset or a cpuset); 0 when that cannot be read.
func affinity(pid int) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return 0
	}
	return set.Count()
}
