package monitor

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = 0x0A

// ListeningPorts returns the TCP ports, in increasing order, on which a
// process of the tree rooted at pid (pid and its descendants) holds a
// listening socket, IPv4 or IPv6.
//
// It matches the socket inodes of the tree's open file descriptors
// (/proc/PID/fd) against the listening sockets of the tree's own network
// namespace (/proc/PID/net/tcp and tcp6): so a port that another process
// shares with the tree (SO_REUSEPORT) counts only for the one whose socket
// it is. It needs Linux: elsewhere it returns an error matching
// errors.ErrUnsupported.
func ListeningPorts(pid int) ([]int, error) {
	if err := linuxOnly("seeing which process listens on a port"); err != nil {
		return nil, fmt.Errorf("listening ports of process %d: %w", pid, err)
	}
	pfs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	p, err := newProcess(pfs, procfs.DefaultMountPoint, pid)
	if err != nil {
		return nil, err
	}
	tree, err := p.tree()
	if err != nil {
		return nil, err
	}
	inodes := map[uint64]bool{}
	for _, st := range tree {
		pr, err := pfs.Proc(st.PID)
		if err != nil {
			continue // it exited meanwhile
		}
		fds, err := pr.FileDescriptorTargets()
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if s, ok := strings.CutPrefix(fd, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
					inodes[n] = true
				}
			}
		}
	}
	if len(inodes) == 0 {
		return nil, nil
	}
	netns, err := procfs.NewFS(filepath.Join(procfs.DefaultMountPoint, strconv.Itoa(pid)))
	if err != nil {
		return nil, fmt.Errorf("listening ports of process %d: %w", pid, err)
	}
	var ports []int
	// procfs deprecates its /proc/net/tcp readers for sock_diag over
	// netlink, which sees the namespace of the socket that asks (ceiling's);
	// /proc/PID/net shows the target's own, a container's included.
	//lint:ignore SA1019 see above
	for _, read := range []func() (procfs.NetTCP, error){netns.NetTCP, netns.NetTCP6} {
		lines, err := read()
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6 on this machine
		}
		if err != nil {
			return nil, fmt.Errorf("listening ports of process %d: %w", pid, err)
		}
		for _, l := range lines {
			if l.St == tcpListen && inodes[l.Inode] && !slices.Contains(ports, int(l.LocalPort)) {
				ports = append(ports, int(l.LocalPort))
			}
		}
	}
	slices.Sort(ports)
	return ports, nil
}
