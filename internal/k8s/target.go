package k8s

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// loopbackTargets refuses a plan, or coordinator flags after "--"
// (--target, --url), that send the load to a loopback address (127.0.0.1,
// ::1, localhost, 0.0.0.0): in a pod, that is the pod itself, not the
// machine ceiling k8s runs on, and nothing of the target is there. Every
// URL the plan sends to or fetches is checked (plan.Destinations): the
// target, each absolute request, flow, login and websocket URL,
// monitor.ready and monitor.prometheus.url. A host written as a template
// ({{...}}) is not known until the run and is not checked.
func loopbackTargets(p *plan.Plan, extra []string) error {
	var errs []error
	for _, d := range p.Destinations() {
		if host, ok := loopbackHost(d.URL); ok {
			errs = append(errs, fmt.Errorf("%s: %s: %s is a loopback address: in a pod it is the pod itself, which the agents and the coordinator cannot send the load to; write the target as the cluster reaches it (a Service, such as http://shop.shop.svc:8080)",
				p.Where(d.Path), d.Path, host))
		}
	}
	for i := 0; i < len(extra); i++ {
		name, value, eq := strings.Cut(extra[i], "=")
		if name != "--target" && name != "--url" {
			continue
		}
		if !eq && i+1 < len(extra) {
			i++
			value = extra[i]
		}
		if host, ok := loopbackHost(value); ok {
			errs = append(errs, fmt.Errorf("coordinator flag %s %s: %s is a loopback address: in a pod it is the pod itself; give the target as the cluster reaches it", name, value, host))
		}
	}
	return errors.Join(errs...)
}

// loopbackHost returns the host of the absolute URL raw when it is a
// loopback name or address (or the unspecified address, which reaches the
// machine itself); a relative URL, a templated host or one that does not
// parse is not.
func loopbackHost(raw string) (string, bool) {
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		if authority, _, _ := strings.Cut(rest, "/"); strings.Contains(authority, "{{") {
			return "", false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return u.Hostname(), true
	}
	ip := net.ParseIP(host)
	return u.Hostname(), ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
