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
// URL the plan sends to or scrapes is checked: the target, each absolute
// request, flow, login and websocket URL, and monitor.prometheus.url.
// A host written as a template ({{...}}) is not known until the run and is
// not checked.
func loopbackTargets(p *plan.Plan, extra []string) error {
	var errs []error
	check := func(path, raw string) {
		if host, ok := loopbackHost(raw); ok {
			errs = append(errs, fmt.Errorf("%s: %s: %s is a loopback address: in a pod it is the pod itself, which the agents and the coordinator cannot send the load to; write the target as the cluster reaches it (a Service, such as http://shop.shop.svc:8080)",
				p.Where(path), path, host))
		}
	}
	check("target", p.Target)
	for i := range p.Scenarios {
		sc := &p.Scenarios[i]
		path := fmt.Sprintf("scenarios[%d]", i)
		check(path+".request.url", sc.Request.URL)
		for j := range sc.Steps {
			check(fmt.Sprintf("%s.steps[%d].request.url", path, j), sc.Steps[j].Request.URL)
		}
		if sc.WebSocket != nil {
			check(path+".websocket.url", sc.WebSocket.URL)
		}
	}
	for j := range p.Login {
		check(fmt.Sprintf("login[%d].request.url", j), p.Login[j].Request.URL)
	}
	if p.Monitor.Prometheus != nil {
		check("monitor.prometheus.url", p.Monitor.Prometheus.URL)
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
