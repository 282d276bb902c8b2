package report

import (
	"fmt"
	"net"
	"net/url"
	"slices"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Unmeasured lists what the run did not measure, read from what it did:
// the caveats a careful load-test report states next to its numbers
// ("what this test did not measure").
func Unmeasured(r *results.Result) []string {
	var out []string
	if loopback(r.Target) {
		out = append(out, "The network: the load came over loopback, so no network latency, TLS termination, proxy or CDN was in the path; real clients add those per request.")
	}
	watched := slices.ContainsFunc(r.Steps, func(s results.Step) bool { return measured(s.Target) })
	scraped := slices.ContainsFunc(r.Steps, func(s results.Step) bool { return s.Target != nil && s.Target.Samples > 0 })
	switch {
	case watched || len(r.Steps) == 0:
	case scraped:
		out = append(out, "The target's own resources: only its metrics endpoint was scraped, its process was not watched (monitor: pid, command or cgroup in the plan, or --pid), so whether CPU or memory ran out is not known.")
	default:
		out = append(out, "The target's own resources: it was not watched (monitor: in the plan, or --pid), so whether CPU, memory or something else ran out is not known.")
	}
	if r.Delivery == nil && !slices.ContainsFunc(r.Steps, func(s results.Step) bool { return s.Delivery != nil }) {
		out = append(out, "What happens after the answer: no sink checked that accepted work reached anything downstream (sinks: and delivery: in the plan).")
	} else {
		out = append(out, "Real outside services: the sinks were mocks with the latency, errors and rate limits the plan gave them; a real service throttles and fails in its own ways.")
	}
	var longest float64
	for _, s := range r.Steps {
		longest = max(longest, s.DurationS)
	}
	switch k := r.Soak; {
	case k != nil:
		out = append(out, fmt.Sprintf("Time beyond the soak: it held the load %s; a drift too slow to move a figure beyond its noise in that time, and what happens after the horizon (%s), are not in these figures.", results.Hours(k.HeldS), results.Hours(k.HorizonS)))
	case longest > 0 && longest < 60:
		out = append(out, fmt.Sprintf("Time: the longest step lasted %.0f s; slow leaks, caches that fill, garbage-collection cycles and disks that fill up over minutes or hours are not in these figures.", longest))
	}
	if len(r.Steps) > 0 && r.Steps[0].Model == "closed" {
		out = append(out, "Arrivals that do not wait: in the closed model a slower target receives fewer requests, so overload shows less than it would with independent users (the open model, --rate).")
	}
	return out
}

// loopback reports whether target's host is a loopback name or address.
func loopback(target string) bool {
	u, err := url.Parse(target)
	if err != nil || u.Hostname() == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
