package control

import (
	"sync"
	"time"
)

// Lifecycle is what one ceiling process started and must not leave behind
// when it is aborted (a second Ctrl-C): the command targets it launched and
// has not stopped (LaunchConfig.Lifecycle), and the undoing of what it
// changed outside their process trees (AtAbort: a container, a cgroup, a
// paused or CPU-starved target). The program makes one, hands it down in
// the options of what starts such things (run.Options, and through them
// the events and a sweep's launchers), and calls Abort when it must end at
// once.
//
// The zero value is ready to use. A nil *Lifecycle keeps nothing: a target
// launched with none is ended only by its Stop or Kill, and AtAbort's
// function never runs. Its methods are safe for concurrent use.
type Lifecycle struct {
	mu      sync.Mutex
	targets map[*Target]struct{} // launched and not yet stopped
	next    int                  // AtAbort's next key
	undo    map[int]func()       // AtAbort's functions, by key
}

// add keeps t until remove.
func (l *Lifecycle) add(t *Target) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.targets == nil {
		l.targets = map[*Target]struct{}{}
	}
	l.targets[t] = struct{}{}
}

// remove forgets t: it was stopped, or is the user's to stop.
func (l *Lifecycle) remove(t *Target) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.targets, t)
}

// AtAbort registers f for Abort: the undoing of what a run started outside
// a target's process tree (a container, a cgroup), which KillAll cannot
// reach. The func it returns unregisters f (call it once f's work is done
// some other way).
func (l *Lifecycle) AtAbort(f func()) (remove func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.undo == nil {
		l.undo = map[int]func(){}
	}
	id := l.next
	l.next++
	l.undo[id] = f
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.undo, id)
	}
}

// Abort kills every target (KillAll), then runs the AtAbort functions all
// at once, waiting for them at most timeout: for a second Ctrl-C, which
// must end ceiling soon and leave nothing it started behind.
func (l *Lifecycle) Abort(timeout time.Duration) {
	if l == nil {
		return
	}
	l.KillAll()
	l.mu.Lock()
	fns := make([]func(), 0, len(l.undo))
	for _, f := range l.undo {
		fns = append(fns, f)
	}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(f)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// KillAll kills every target launched with l and not stopped, at once and
// without a grace (on Unix, each one's whole process group), and does not
// wait for them: for an abort, when there is no time to stop them one by
// one but they must not outlive ceiling. On Linux a target is also killed
// when ceiling dies without a chance to call it (SIGKILL): it is started
// with a parent-death signal.
func (l *Lifecycle) KillAll() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for t := range l.targets {
		t.ending.Store(true)
		t.kill()
	}
}
