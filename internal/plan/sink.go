package plan

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of sinks.
const (
	// DefaultSinkListen is a sink's address when the plan gives none: a
	// free loopback port, useful only in tests (the target cannot know it).
	DefaultSinkListen = "127.0.0.1:0"
	// DefaultSinkStatus is the status of a sink's normal answer.
	DefaultSinkStatus = 200
	// DefaultDrain is how long a run waits for late deliveries after the
	// load stops.
	DefaultDrain = 60 * time.Second
)

// rateKeyHeader prefixes the sink package's form of a rate-limit key that
// names a request header ("header:X-Channel").
const rateKeyHeader = "header:"

// Key returns the rate-limit key in the form the sink package takes: the
// gjson path for "{{.json.channel}}" ("channel"), "header:X-Channel" for
// "{{.header.X-Channel}}", and "" for an empty Per (one limit for all
// requests). Call it on a validated plan: a Per that Validate refuses also
// gives "".
func (r *SinkRateLimit) Key() string {
	kind, name, ok := parsePer(r.Per)
	switch {
	case !ok || kind == "":
		return ""
	case kind == "header":
		return rateKeyHeader + name
	}
	return name
}

// parsePer splits a rate limit's per, "{{.json.<path>}}" or
// "{{.header.<Name>}}" (spaces inside the braces allowed), into "json" or
// "header" and the path or name. An empty per gives "", "", true.
func parsePer(per string) (kind, name string, ok bool) {
	if per == "" {
		return "", "", true
	}
	inner, open := strings.CutPrefix(per, "{{")
	inner, closed := strings.CutSuffix(inner, "}}")
	if !open || !closed {
		return "", "", false
	}
	inner = strings.TrimSpace(inner)
	if path, ok := strings.CutPrefix(inner, ".json."); ok {
		// A path such as "header:x" would read as a header in the sink's form.
		if path == "" || strings.ContainsAny(path, " \t\r\n{}") || strings.HasPrefix(path, rateKeyHeader) {
			return "", "", false
		}
		return "json", path, true
	}
	if h, ok := strings.CutPrefix(inner, ".header."); ok && headerNameProblem(h) == "" && !strings.ContainsAny(h, "{}") {
		return "header", h, true
	}
	return "", "", false
}

// sinkName is what a sink may be called: letters, digits, _, - and .,
// starting with a letter.
var sinkName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// fillSinks sets the sinks' defaults. A drain written as 0s stays zero (do
// not wait); an absent one is DefaultDrain.
func (p *Plan) fillSinks() {
	for i := range p.Sinks {
		s := &p.Sinks[i]
		if s.Listen == "" {
			s.Listen = DefaultSinkListen
		}
		if s.Status == 0 {
			s.Status = DefaultSinkStatus
		}
		if s.ErrorRate == nil {
			s.ErrorRate = &Percent{0}
		}
		if s.Drain.Duration == 0 && !p.has(fmt.Sprintf("sinks[%d].drain", i)) {
			s.Drain.Duration = DefaultDrain
		}
	}
}

// sinks checks each sink, and that names and non-zero ports are unique.
func (c *checker) sinks() {
	names := map[string]int{}
	ports := map[int]int{}
	for i := range c.p.Sinks {
		path := fmt.Sprintf("sinks[%d]", i)
		s := &c.p.Sinks[i]
		c.sink(path, s)
		if j, dup := names[s.Name]; dup && s.Name != "" {
			c.add(path+".name", "sink name %q is already used by %s: names must be unique", s.Name, c.other(fmt.Sprintf("sinks[%d]", j), ".name"))
		} else if s.Name != "" {
			names[s.Name] = i
		}
		port, msg := listenProblem(s.Listen)
		if msg != "" {
			c.add(path+".listen", "%s", msg)
			continue
		}
		if j, dup := ports[port]; dup && port != 0 {
			c.add(path+".listen", "%s listens on port %d too: give each sink its own port (or 0 for any free one)", c.other(fmt.Sprintf("sinks[%d]", j), ".listen"), port)
		} else if port != 0 {
			ports[port] = i
		}
	}
}

// other names a field path for a message about a clash with it, with its
// position when it has one: "sinks[0] (p.yaml:3:9)". suffix is the field
// whose position is given.
func (c *checker) other(path, suffix string) string {
	if w := c.p.Where(path + suffix); w != "" && w != c.p.File {
		return path + " (" + w + ")"
	}
	return path
}

// sink checks one sink's values.
func (c *checker) sink(path string, s *Sink) {
	switch {
	case s.Name == "":
		c.add(path+".name", "required: a name such as slack, for a scenario's delivery to name")
	case !sinkName.MatchString(s.Name):
		c.add(path+".name", "want a name of letters, digits, _, - and ., starting with a letter, such as slack, not %q", s.Name)
	}
	c.latency(path+".latency", &s.Latency)
	if e := s.ErrorRate; e != nil && !(e.Value >= 0 && e.Value <= 100) {
		c.add(path+".error_rate", "want a percentage from 0%% to 100%%, not %v%%", e.Value)
	}
	if s.Status < 200 || s.Status > 599 {
		c.add(path+".status", "want a final HTTP status from 200 to 599, not %d", s.Status)
	}
	if r := s.RateLimit; r != nil {
		if math.IsNaN(r.RPS) || math.IsInf(r.RPS, 0) || r.RPS <= 0 {
			c.add(path+".rate_limit.rps", "want a positive number of requests per second per key, such as 1, not %v", r.RPS)
		}
		if _, _, ok := parsePer(r.Per); !ok {
			c.add(path+".rate_limit.per", `want "{{.json.<path>}}" (a field of the JSON body, e.g. "{{.json.channel}}"), `+
				`"{{.header.<Name>}}" (a request header, e.g. "{{.header.X-Channel}}"), or nothing for one limit over all requests; not %q`, r.Per)
		}
	}
	c.sinkID(path+".id", &s.ID)
	if s.Drain.Duration < 0 {
		c.add(path+".drain", "want a non-negative duration such as \"60s\", not %s", s.Drain)
	}
}

// sinkID checks where a sink finds the message id: exactly one of json or
// regex, since it reads the id from the request body.
func (c *checker) sinkID(path string, e *Extract) {
	for _, f := range []struct{ key, value string }{{"header", e.Header}, {"cookie", e.Cookie}} {
		if f.value != "" {
			c.add(path+"."+f.key, "a sink finds the id in each request's body: use json or regex, not %s", f.key)
		}
	}
	switch {
	case e.JSON == "" && e.Regex == "" && e.Header == "" && e.Cookie == "":
		c.add(path, "required: where the message id is in each received body, json (a JSON path) or regex, e.g. {json: text}")
	case e.JSON != "" && e.Regex != "":
		c.add(path+".regex", "want one of json or regex, not both")
	}
	if e.Regex != "" {
		if _, err := regexp.Compile(e.Regex); err != nil {
			c.add(path+".regex", "%v", err)
		}
	}
}

// listenProblem parses a sink's host:port, returning the port, or a
// message saying what is wrong.
func listenProblem(addr string) (int, string) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Sprintf("want host:port such as 127.0.0.1:9911, not %q", addr)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || strings.TrimLeft(portText, "0123456789") != "" || port > 65535 {
		return 0, fmt.Sprintf("want a port number from 0 (any free port) to 65535, not %q", portText)
	}
	if !hostOK(host) {
		return 0, fmt.Sprintf("want an IP address or a host name before the port, such as 127.0.0.1, not %q", host)
	}
	return port, ""
}

// hostOK reports whether host is empty (every interface), an IP address or
// a host name.
func hostOK(host string) bool {
	if host == "" {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, b := range []byte(label) {
			if !(b == '-' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z') {
				return false
			}
		}
	}
	return true
}

// delivery checks a scenario's delivery at path: a sink of the plan, and
// an id template that renders the same value the iteration sent.
func (c *checker) delivery(path string, d *Delivery) {
	names := make([]string, 0, len(c.p.Sinks))
	for _, s := range c.p.Sinks {
		if s.Name != "" && !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	switch {
	case d.Sink == "" && len(names) == 0:
		c.add(path+".sink", "required: the name of a sink, and the plan has no sinks: add one under sinks:")
	case d.Sink == "":
		c.add(path+".sink", "required: the name of a sink; sinks: %s", strings.Join(names, ", "))
	case len(names) == 0:
		c.add(path+".sink", "no sink named %q: the plan has no sinks; add one under sinks:", d.Sink)
	case !slices.Contains(names, d.Sink):
		c.add(path+".sink", "no sink named %q%s; sinks: %s", d.Sink, didYouMean(d.Sink, names, ""), strings.Join(names, ", "))
	}
	switch {
	case d.ID == "":
		c.add(path+".id", "required: a template of the id the sink must receive, e.g. \"{{.msgid}}\"")
		return
	case !IsTemplate(d.ID):
		c.add(path+".id", "a fixed id is the same for every iteration, so every delivery but the first would be a duplicate: "+
			"use a template such as \"{{.msgid}}\", with vars: {msgid: \"{{uuid}}\"}")
		return
	}
	c.template(path+".id", d.ID, false)
	if t, err := ParseTemplate(path, d.ID); err == nil {
		_, calls := templateUses(t)
		for _, call := range calls {
			if _, ours := TemplateFuncs[call.name]; ours && call.name != "env" && call.name != "TODO" {
				c.add(path+".id", "%s gives a new value each time it is rendered, not the id the iteration sent: "+
					"make it a var (e.g. vars: {msgid: %q}) and use {{.msgid}} in the request and here", call.name, funcExamples[call.name])
				break
			}
		}
	}
}
