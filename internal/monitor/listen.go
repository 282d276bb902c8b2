package monitor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// listenPoll is how often WaitListening looks for the listening sockets.
const listenPoll = 10 * time.Millisecond

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

// WaitListening waits until the target's process tree holds a listening
// socket on every one of ports (ListeningPorts), polling every 10 ms: the
// moment a new copy of a server can take connections itself, told apart
// from an old copy that shares its port. It gives up when the target
// exits, timeout passes or ctx ends. It needs Linux: elsewhere it returns
// an error matching errors.ErrUnsupported at once.
func (t *Target) WaitListening(ctx context.Context, ports []int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(listenPoll)
	defer tick.Stop()
	for {
		held, err := ListeningPorts(t.PID())
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return err
		case err == nil && containsAll(held, ports):
			return nil
		}
		select {
		case <-t.done:
			return fmt.Errorf("target exited (%v) before it listened on port %s", exitText(t.waitErr), portList(ports))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("target did not listen on port %s within %s (it listens on %s)", portList(ports), timeout.Round(time.Millisecond), portList(held))
			}
			return fmt.Errorf("wait for port %s: %w", portList(ports), context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func containsAll(have, want []int) bool {
	for _, p := range want {
		if !slices.Contains(have, p) {
			return false
		}
	}
	return true
}

// portList writes ports as "8080" or "8080, 8443"; none as "no port".
func portList(ports []int) string {
	if len(ports) == 0 {
		return "no port"
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}
