package monitor

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// userHZ is the kernel's clock tick for the times in /proc/<pid>/stat: 100
// on every platform Go supports (procfs assumes the same).
const userHZ = 100

// member is what a reading remembers of one process of the tree.
type member struct {
	start uint64 // start time in ticks after boot: tells a reused PID apart
	ppid  int
	ticks uint64 // utime + stime + cutime + cstime
}

// process is a Source for a process and its descendants.
//
// CPU accounting: the tree's CPU is Σ (utime + stime + cutime + cstime) over
// its live members. When a member reaps a child, the kernel adds the child's
// own and children's times to the reaper's cutime/cstime, so the sum is
// unchanged by the reap, and children too short-lived to be seen between
// two readings are still counted. A member that leaves the tree otherwise (its
// parent died before it, so it was re-parented outside the tree) takes its
// time with it; its last reading is then kept in retired so the total never
// goes back. What is lost is at most one interval of such an orphan's CPU.
type process struct {
	fs       procfs.FS
	procDir  string
	buf      [1024]byte // for parent
	root     int
	rootBorn uint64
	pageSize int64

	known   map[int]member // the tree at the previous reading
	retired uint64         // ticks of members that left without being reaped in the tree
	last    uint64         // the previous total, so that CPU never goes back
	dead    bool

	// main is the tree's main process at the previous reading (see
	// mainOf), zero when it has none; restarts counts the times it ended
	// (Sample.Restarts).
	main     identity
	restarts int
}

// identity tells a process apart from a later one given the same PID.
type identity struct {
	pid   int
	start uint64
}

// A tree's main process is the member that holds at least half of the
// tree's resident memory, and at least mainMinRSS: the server that a
// shell or a supervisor keeps, not the shell, nor a short command it
// runs now and then. When the main process of one reading has gone at
// the next while the root lives on, the target restarted (a crash, a
// worker recycled whole, a supervisor's restart): Sample.Restarts.
const mainMinRSS = 4 << 20

var _ Source = (*process)(nil)

// Process returns a Source for the process pid and all its descendants,
// which are found again on every Read by walking the PPid links in /proc.
// It needs Linux: elsewhere it returns an error matching
// errors.ErrUnsupported.
func Process(pid int) (Source, error) {
	if err := linuxOnly("watching a process's CPU and memory"); err != nil {
		return nil, fmt.Errorf("watch process %d: %w", pid, err)
	}
	pfs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	return newProcess(pfs, procfs.DefaultMountPoint, pid)
}

func newProcess(pfs procfs.FS, dir string, pid int) (*process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("watch process %d: want a PID above 0", pid)
	}
	pr, err := pfs.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("watch process %d: %w", pid, err)
	}
	st, err := pr.Stat()
	if err != nil {
		return nil, fmt.Errorf("watch process %d: %w", pid, err)
	}
	if gone(st) {
		return nil, fmt.Errorf("watch process %d: it has exited", pid)
	}
	return &process{
		fs: pfs, procDir: dir, root: pid, rootBorn: st.Starttime,
		pageSize: int64(os.Getpagesize()),
		known:    map[int]member{},
	}, nil
}

// Tree lists process pid and every process below it (its children,
// theirs...), found in /proc as Process finds them: for what acts on a
// whole tree of processes ceiling did not start. It needs Linux: elsewhere
// it returns an error matching errors.ErrUnsupported.
func Tree(pid int) ([]int, error) {
	if err := linuxOnly("listing a process tree"); err != nil {
		return nil, err
	}
	pfs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	p, err := newProcess(pfs, procfs.DefaultMountPoint, pid)
	if err != nil {
		return nil, err
	}
	stats, err := p.tree()
	if err != nil {
		return nil, err
	}
	out := make([]int, len(stats))
	for i, st := range stats {
		out[i] = st.PID
	}
	return out, nil
}

// gone reports whether a process has exited (a zombie waiting to be reaped,
// or dead).
func gone(st procfs.ProcStat) bool {
	return st.State == "Z" || st.State == "X" || st.State == "x"
}

// Read implements Source.
func (p *process) Read() (Sample, error) {
	at := time.Now()
	if p.dead {
		return Sample{At: at, CPU: ticksToDuration(p.last), Restarts: p.restarts}, nil
	}
	tree, err := p.tree()
	if err != nil {
		return Sample{}, err
	}
	if len(tree) == 0 || tree[0].Starttime != p.rootBorn || gone(tree[0]) {
		p.dead = true
		return Sample{At: at, CPU: ticksToDuration(p.last), Restarts: p.restarts}, nil
	}
	s := Sample{At: at, Alive: true}
	cur := make(map[int]member, len(tree))
	var biggest identity
	var biggestRSS int64
	for _, st := range tree {
		cur[st.PID] = member{
			start: st.Starttime, ppid: st.PPID,
			ticks: uint64(st.UTime) + uint64(st.STime) + uint64(max(st.CUTime, 0)) + uint64(max(st.CSTime, 0)),
		}
		s.Threads += st.NumThreads
		pr, err := p.fs.Proc(st.PID)
		if err != nil {
			continue
		}
		if m, err := pr.Statm(); err == nil {
			rss := int64(m.Resident) * p.pageSize
			s.RSSBytes += rss
			if rss > biggestRSS {
				biggest, biggestRSS = identity{st.PID, st.Starttime}, rss
			}
		}
		if n, err := pr.FileDescriptorsLen(); err == nil {
			s.FDs += n
		}
	}
	if p.main.pid != 0 && !living(tree, p.main) {
		p.restarts++ // the main process has gone, the root lives on
	}
	p.main = identity{}
	if biggestRSS >= mainMinRSS && 2*biggestRSS >= s.RSSBytes {
		p.main = biggest
	}
	s.CPU, s.Restarts = ticksToDuration(p.account(cur)), p.restarts
	return s, nil
}

// living reports whether process id is in tree and has not ended (a
// zombie has).
func living(tree []procfs.ProcStat, id identity) bool {
	for _, st := range tree {
		if st.PID == id.pid && st.Starttime == id.start {
			return !gone(st)
		}
	}
	return false
}

// tree returns the stat of the root and its descendants, root first; empty
// when the root has gone. Processes that vanish meanwhile are skipped.
func (p *process) tree() ([]procfs.ProcStat, error) {
	all, err := p.fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := make(map[int][]int)
	for _, pr := range all {
		if ppid, ok := p.parent(pr.PID); ok && pr.PID != p.root {
			children[ppid] = append(children[ppid], pr.PID)
		}
	}
	var out []procfs.ProcStat
	for queue := []int{p.root}; len(queue) > 0; queue = queue[1:] {
		pr, err := p.fs.Proc(queue[0])
		if err != nil {
			continue
		}
		st, err := pr.Stat()
		if err != nil {
			continue
		}
		out = append(out, st)
		queue = append(queue, children[st.PID]...)
	}
	return out, nil
}

// parent returns the PPid of a process. Every process on the machine is
// asked on every reading, so this skips procfs' full parse of stat: one
// open, read and close into a reused buffer, and the fourth field. The
// command name (second field, in parentheses) may hold any byte, so fields
// are counted from the last ')'.
func (p *process) parent(pid int) (int, bool) {
	fd, err := syscall.Open(p.procDir+"/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := syscall.Read(fd, p.buf[:])
	_ = syscall.Close(fd)
	if err != nil || n <= 0 {
		return 0, false
	}
	line := p.buf[:n]
	i := bytes.LastIndexByte(line, ')')
	if i < 0 || i+4 > len(line) {
		return 0, false
	}
	rest := line[i+4:] // past ") S "
	end := bytes.IndexByte(rest, ' ')
	if end < 0 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(rest[:end]))
	return ppid, err == nil
}

// account folds the members that left the tree since the previous reading
// into retired, remembers cur, and returns the tree's total CPU ticks.
func (p *process) account(cur map[int]member) uint64 {
	for pid, old := range p.known {
		if now, ok := cur[pid]; ok && now.start == old.start {
			continue // still here
		}
		parentOld, knew := p.known[old.ppid]
		parentNow, alive := cur[old.ppid]
		if knew && alive && parentNow.start == parentOld.start {
			continue // reaped by a living member: its time is in that member's cutime
		}
		p.retired += old.ticks
	}
	p.known = cur
	total := p.retired
	for _, m := range cur {
		total += m.ticks
	}
	// A member reaped without passing its time on (its parent ignores
	// SIGCHLD) can still make the sum dip: carry the dip so that CPU never
	// goes back and later growth still shows.
	if total < p.last {
		p.retired += p.last - total
		total = p.last
	}
	p.last = total
	return total
}

func ticksToDuration(t uint64) time.Duration {
	return time.Duration(t) * (time.Second / userHZ)
}
