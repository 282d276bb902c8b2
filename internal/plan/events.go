package plan

import (
	"fmt"
	"slices"
)

// Event is something done to the target during a step, whose cost (the
// errors and latency it caused, the time to recover) the run measures.
type Event struct {
	// Name names it in the results; unique in the plan.
	Name string `yaml:"name"`
	// Step is the step it happens in, from 1; 0: the first. EveryStep
	// repeats it in every step.
	Step      int  `yaml:"step"`
	EveryStep bool `yaml:"every_step"`
	// At is when, from the start of the step's counted window.
	At Duration `yaml:"at"`
	// Action is a built-in action on the watched target (Actions); Run is
	// a command of the user's instead.
	Action string `yaml:"action"`
	// For is how long a pause or a CPU limit lasts.
	For Duration `yaml:"for"`
	// CPUs is the CPU action's limit, in cores (0.2: a fifth of one).
	CPUs float64 `yaml:"cpus"`
	// Run is a shell command, with {{.target.pid}} and {{.target.url}}
	// (put in shell-quoted; also in its environment as CEILING_TARGET_PID
	// and CEILING_TARGET_URL); its exit code and the tail of its output
	// are recorded.
	Run string `yaml:"run"`
	// Required makes a failing command (or action) fail the run; otherwise
	// it is reported.
	Required bool `yaml:"required"`
}

// The built-in actions.
const (
	ActionPause   = "pause"   // SIGSTOP the target's process tree, SIGCONT after For
	ActionKill    = "kill"    // SIGKILL it; a command target is started again
	ActionRestart = "restart" // stop it (SIGTERM, then the grace), start it again
	ActionRolling = "rolling" // start a second copy, wait until ready, stop the first
	ActionCPU     = "cpu"     // limit its CPU to CPUs for For (cgroups)
)

// Actions are the built-in actions, in the order the docs give them.
var Actions = []string{ActionPause, ActionKill, ActionRestart, ActionRolling, ActionCPU}

// EventSteps returns the steps (from 0) event e happens in, of n.
func (e *Event) EventSteps(n int) []int {
	if e.EveryStep {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	return []int{max(e.Step, 1) - 1}
}

// events checks the events section.
func (c *checker) events() {
	p := c.p
	names := map[string]int{}
	for i := range p.Events {
		e := &p.Events[i]
		path := fmt.Sprintf("events[%d]", i)
		if e.Name == "" {
			c.add(path+".name", "required: a name for the results, e.g. restart-api")
		} else if j, ok := names[e.Name]; ok {
			c.add(path+".name", "%q repeats events[%d]'s name", e.Name, j)
		} else {
			names[e.Name] = i
		}
		switch {
		case (e.Action == "") == (e.Run == ""):
			c.add(path, "give an action (%v) or a run command, one of them", Actions)
		case e.Action != "" && !slices.Contains(Actions, e.Action):
			c.add(path+".action", "want one of %v, not %q", Actions, e.Action)
		}
		if n := p.Steps(); e.Step < 0 || e.Step > n {
			c.add(path+".step", "want a step from 1 to %d (the plan's steps), not %d", n, e.Step)
		}
		if e.EveryStep && e.Step != 0 {
			c.add(path+".every_step", "every_step or step, not both")
		}
		if e.At.Duration < 0 || e.At.Duration >= p.Load.Step.Duration {
			c.add(path+".at", "want an offset into the step's %v window, from 0 to less than it, not %v", p.Load.Step.Duration, e.At.Duration)
		}
		c.eventAction(path, e)
	}
}

// eventAction checks what an action needs: a watched target that allows
// it, a duration, a limit.
func (c *checker) eventAction(path string, e *Event) {
	m := &c.p.Monitor
	switch e.Action {
	case ActionPause:
		if e.For.Duration <= 0 {
			c.add(path+".for", "a pause needs a duration, e.g. for: 1s")
		}
		if m.PID == 0 && m.Command == "" {
			c.add(path+".action", "pause acts on the watched target: set monitor.pid or monitor.command")
		}
	case ActionKill:
		if m.PID == 0 && m.Command == "" {
			c.add(path+".action", "kill acts on the watched target: set monitor.pid or monitor.command")
		}
	case ActionRestart, ActionRolling:
		if m.Command == "" {
			c.add(path+".action", "%s starts the target again: it needs monitor.command (ceiling starts the target)", e.Action)
		}
	case ActionCPU:
		if e.CPUs <= 0 || e.For.Duration <= 0 {
			c.add(path+".cpus", "a CPU limit needs cpus (cores, e.g. 0.2) and for (e.g. 10s)")
		}
		// The cgroup is checked when the run starts: a sweep's launcher
		// sets monitor.cgroup after the plan is read.
	}
	if e.Action != ActionPause && e.Action != ActionCPU && e.For.Duration != 0 {
		c.add(path+".for", "only pause and cpu last for a time")
	}
}
