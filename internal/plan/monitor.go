package plan

import (
	"fmt"
	"regexp"
	"time"
)

// Defaults of the monitor.
const (
	// DefaultReadyTimeout bounds the wait for a started target to be ready.
	DefaultReadyTimeout = 30 * time.Second
	// DefaultStopGrace is how long a started target may take to stop.
	DefaultStopGrace = 5 * time.Second
)

// metricSelector is a Prometheus metric name with an optional label filter.
var metricSelector = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,\s*[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*)?\})?$`)

// fillMonitor sets the monitor's defaults.
func (p *Plan) fillMonitor() {
	m := &p.Monitor
	if m.Command == "" {
		return
	}
	if m.ReadyTimeout.Duration == 0 {
		m.ReadyTimeout.Duration = DefaultReadyTimeout
	}
	if m.StopGrace.Duration == 0 {
		m.StopGrace.Duration = DefaultStopGrace
	}
	if m.Ready == "" {
		m.Ready = p.Target
	}
}

// monitor checks the monitor section.
func (c *checker) monitor() {
	c.p.fillMonitor()
	m := &c.p.Monitor
	switch {
	case m.PID < 0:
		c.add("monitor.pid", "want a process id, not %d", m.PID)
	case m.PID > 0 && m.Command != "":
		c.add("monitor.command", "give pid (a running target) or command (one ceiling starts), not both")
	}
	if m.Command == "" {
		for path, set := range map[string]bool{"monitor.env": len(m.Env) > 0, "monitor.dir": m.Dir != "", "monitor.ready": m.Ready != ""} {
			if set {
				c.add(path, "only a command target has this: set monitor.command")
			}
		}
	} else if m.Ready == "" {
		c.add("monitor.ready", "a started target needs a URL that answers once it is ready (or a target: to default to)")
	} else if msg := httpURLProblem(m.Ready); msg != "" {
		c.add("monitor.ready", "%s", msg)
	}
	if m.ReadyTimeout.Duration < 0 || m.StopGrace.Duration < 0 {
		c.add("monitor", "ready_timeout and stop_grace must not be negative")
	}
	if m.Cgroup != "" && m.PID > 0 {
		c.add("monitor.cgroup", "give pid or cgroup: the cgroup's figures replace the process's")
	}
	if pr := m.Prometheus; pr != nil {
		if pr.URL == "" {
			c.add("monitor.prometheus.url", "required: the endpoint to scrape")
		} else if msg := httpURLProblem(pr.URL); msg != "" {
			c.add("monitor.prometheus.url", "%s", msg)
		}
		if len(pr.Metrics) == 0 {
			c.add("monitor.prometheus.metrics", "name the metrics to keep, e.g. [queue_depth, event_loop_lag_seconds]")
		}
		for i, name := range pr.Metrics {
			if !metricSelector.MatchString(name) {
				c.add(fmt.Sprintf("monitor.prometheus.metrics[%d]", i), "want a metric name, optionally with labels such as queue_depth{lane=\"chat\"}, not %q", name)
			}
		}
	}
}
