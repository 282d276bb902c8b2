package plan

import "fmt"

// A Destination is a URL a plan sends requests to, opens a socket on or
// fetches: where the plan says it, as written, and as it is used.
type Destination struct {
	// Path is the key that holds it: "target",
	// "scenarios[1].steps[0].request.url", "monitor.prometheus.url".
	Path string
	// URL is as written.
	URL string
	// Resolved is the URL used: URL when absolute, else the target
	// followed by it (RequestURL, WebSocketURL). Template actions are kept
	// as written.
	Resolved string
}

// Destinations returns every URL the plan sends to or fetches, in the
// plan's order: the target, each scenario's request, flow step and
// websocket url, each login step's, monitor.ready and
// monitor.prometheus.url, those that are set. Call it on a validated
// plan.
func (p *Plan) Destinations() []Destination {
	var out []Destination
	add := func(path, raw, resolved string) {
		out = append(out, Destination{Path: path, URL: raw, Resolved: resolved})
	}
	if p.Target != "" {
		add("target", p.Target, p.Target)
	}
	for i := range p.Scenarios {
		sc := &p.Scenarios[i]
		path := fmt.Sprintf("scenarios[%d]", i)
		switch {
		case sc.WebSocket != nil:
			add(path+".websocket.url", sc.WebSocket.URL, p.WebSocketURL(sc.WebSocket))
		case len(sc.Steps) > 0:
			for j := range sc.Steps {
				add(fmt.Sprintf("%s.steps[%d].request.url", path, j), sc.Steps[j].Request.URL, p.RequestURL(&sc.Steps[j].Request))
			}
		default:
			add(path+".request.url", sc.Request.URL, p.RequestURL(&sc.Request))
		}
	}
	for j := range p.Login {
		add(fmt.Sprintf("login[%d].request.url", j), p.Login[j].Request.URL, p.RequestURL(&p.Login[j].Request))
	}
	if p.Monitor.Ready != "" {
		add("monitor.ready", p.Monitor.Ready, p.resolve(p.Monitor.Ready))
	}
	if p.Monitor.Prometheus != nil {
		add("monitor.prometheus.url", p.Monitor.Prometheus.URL, p.Monitor.Prometheus.URL)
	}
	return out
}
