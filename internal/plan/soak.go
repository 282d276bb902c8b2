package plan

import "time"

// The soak's defaults.
const (
	// DefaultSoakWindow is the length of a soak's windows.
	DefaultSoakWindow = time.Minute
	// MinSoakWindow is the shortest window: one reading of the target a
	// second, and the load's own seconds, make a window.
	MinSoakWindow = time.Second
	// DefaultHorizonTimes is how many times a soak's length its horizon
	// is by default: an 8h soak fails when a drift would reach a limit
	// within 24h of its start.
	DefaultHorizonTimes = 3
)

// soak checks load.soak: a length, windows that fit in it, a horizon at
// least as long, and one level held, not stairs.
func (c *checker) soak() {
	l := &c.p.Load
	k := l.Soak
	if k == nil {
		return
	}
	switch {
	case k.For.Duration <= 0:
		c.add("load.soak.for", "want how long to hold the load, a positive duration such as \"8h\", not %s", k.For)
	case k.Window.Duration < MinSoakWindow:
		c.add("load.soak.window", "want at least %v, such as \"1m\", not %s", MinSoakWindow, k.Window)
	case k.Window.Duration > k.For.Duration:
		c.add("load.soak.window", "want at most the soak's length (%s), not %s: a soak is judged on its windows", k.For, k.Window)
	}
	if k.For.Duration > 0 && k.Horizon.Duration < k.For.Duration {
		c.add("load.soak.horizon", "want at least the soak's length (%s), not %s (leave it out for %d times its length)", k.For, k.Horizon, DefaultHorizonTimes)
	}
	if k.MemoryLimitMB < 0 {
		c.add("load.soak.memory_limit_mb", "want the target's memory limit in MiB, or 0 for its cgroup's, not %g", k.MemoryLimitMB)
	}
	switch {
	case l.Ramp != nil:
		c.add("load.ramp", "a soak holds one level: give one rate (rates: [500]) instead of a ramp")
	case c.p.Closed() && len(l.VUs) > 1:
		c.add("load.vus", "a soak holds one level: give one number of users (vus: [50]), not %d", len(l.VUs))
	case !c.p.Closed() && len(l.Rates) > 1:
		c.add("load.rates", "a soak holds one level: give one rate (rates: [500]), not %d", len(l.Rates))
	}
	if l.Each {
		c.add("load.each", "a soak holds the weighted mix: each runs stairs, not a soak")
	}
	if c.p.Repeat > 1 {
		c.add("repeat", "a soak runs once: its windows are its repeats")
	}
	if c.p.has("load.step") {
		c.add("load.step", "a soak's length is load.soak.for, and its windows load.soak.window: leave load.step out")
	}
}
