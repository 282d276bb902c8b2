package plan

import (
	"fmt"
	"maps"
	"net/textproto"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Limits and defaults of WebSocket scenarios.
const (
	// MaxWebSocketConnections is the most sockets a WebSocket scenario may
	// hold open.
	MaxWebSocketConnections = 1_000_000
	// DefaultAckTimeout is how long a frame waits for its ack when the plan
	// does not say.
	DefaultAckTimeout = 10 * time.Second
	// DefaultMaxFrameBytes caps a received frame: 1 MiB.
	DefaultMaxFrameBytes = 1 << 20
)

// handshakeHeaders are the headers, by canonical name, that the WebSocket
// client sets in the opening handshake itself: a plan that set them too
// would send them twice, and the client refuses to.
var handshakeHeaders = []string{
	"Connection", "Sec-Websocket-Extensions", "Sec-Websocket-Key", "Sec-Websocket-Version", "Upgrade",
}

// WebSocketURL returns the absolute ws:// or wss:// URL of a WebSocket
// scenario: its url when that is absolute, else the plan's target followed
// by it with http:// turned into ws:// and https:// into wss://
// ("http://h:3000" and "/widget" give "ws://h:3000/widget"). Template
// actions are kept as written. Call it on a validated plan.
func (p *Plan) WebSocketURL(w *WebSocket) string {
	raw := w.URL
	if isAbsolute(raw) || p.Target == "" {
		return raw
	}
	u := p.resolve(raw)
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	switch strings.ToLower(scheme) {
	case "http":
		return "ws://" + rest
	case "https":
		return "wss://" + rest
	}
	return u
}

// WebSocketHeaders returns the headers of a WebSocket scenario's opening
// handshake: the plan's http.headers merged with the scenario's own, its
// own winning when both name a header (names compare case-insensitively).
// Each pair is {name, value}, sorted by canonical name as RequestHeaders
// does; values are templates, kept as written.
func (p *Plan) WebSocketHeaders(w *WebSocket) [][2]string {
	return mergeHeaders(p.HTTP.Headers, w.Headers)
}

// fillWebSocket sets a WebSocket scenario's defaults. The ack timeout is
// set only with send: an idle soak waits for no ack, and an ack_timeout on
// one is a problem.
func fillWebSocket(w *WebSocket) {
	if w.Connections == 0 {
		w.Connections = 1
	}
	if w.Send != "" && w.AckTimeout.Duration == 0 {
		w.AckTimeout.Duration = DefaultAckTimeout
	}
	if w.MaxFrameBytes == 0 {
		w.MaxFrameBytes = DefaultMaxFrameBytes
	}
}

// webSocket checks a WebSocket scenario at path (scenarios[i].websocket).
func (c *checker) webSocket(path string, w *WebSocket) {
	if c.p.Load.Model == Closed {
		// Each user opens its socket in its first iteration, after its login.
		c.webSocketURL(path+".url", w)
		c.headers(path+".headers", w.Headers, true)
	} else {
		// The held sockets open before the first step, with no login.
		c.scope.early = true
		c.scope.within(nil, func() {
			c.webSocketURL(path+".url", w)
			c.headers(path+".headers", w.Headers, true)
		})
		c.scope.early = false
	}
	switch {
	case w.Connections < 0:
		c.add(path+".connections", "want 0 (the default, 1) or more connections, not %d", w.Connections)
	case w.Connections > MaxWebSocketConnections:
		c.add(path+".connections", "want at most %d connections, not %d", MaxWebSocketConnections, w.Connections)
	}
	c.template(path+".send", w.Send, false)
	c.ack(path, w)
	if w.MaxFrameBytes < 0 {
		c.add(path+".max_frame_bytes", "want 0 (1 MiB) or more, not %d", w.MaxFrameBytes)
	}
	c.handshake(path, w)
	for i, sp := range w.Subprotocols {
		if !isHeaderToken(sp) {
			c.add(fmt.Sprintf("%s.subprotocols[%d]", path, i),
				"want a subprotocol name without spaces, commas or quotes, such as chat, not %q", sp)
		}
	}
}

// webSocketURL checks a WebSocket scenario's url.
func (c *checker) webSocketURL(path string, w *WebSocket) {
	switch {
	case w.URL == "":
		c.add(path, "required: a ws:// or wss:// URL, or a path relative to target")
	case !isAbsolute(w.URL) && strings.Contains(w.URL, "://"):
		// Meant as absolute, but it does not parse: resolving it against
		// the target would hide that.
		c.add(path, "%s", wsURLProblem(w.URL))
	case !isAbsolute(w.URL) && c.p.Target == "":
		c.add(path, "%q is relative: set target (e.g. http://127.0.0.1:3000) or give a ws:// or wss:// URL", w.URL)
	case !isAbsolute(w.URL) && c.badTarget:
		// The target's problem is reported; the resolved URL would repeat it.
	default:
		if msg := wsURLProblem(c.p.WebSocketURL(w)); msg != "" {
			c.add(path, "%s", msg)
		}
	}
	c.template(path, w.URL, false)
}

// ack checks how acks and rejections are matched, and that an idle soak
// (no send) sets nothing about acks.
func (c *checker) ack(path string, w *WebSocket) {
	if w.Send == "" {
		const idle = "an idle soak (no send) waits for no ack: remove %s, or set send"
		if w.Ack != nil {
			c.add(path+".ack", idle, "ack")
		}
		if w.Reject != nil {
			c.add(path+".reject", idle, "reject")
		}
		if w.AckTimeout.Duration != 0 || c.p.has(path+".ack_timeout") {
			c.add(path+".ack_timeout", idle, "ack_timeout")
		}
		return
	}
	if w.AckTimeout.Duration < 0 {
		c.add(path+".ack_timeout", "want a non-negative duration such as \"10s\", not %s", w.AckTimeout)
	}
	if w.Ack == nil {
		c.add(path+".ack", "required with send: how to recognise the frame that acknowledges a sent one, e.g. {json: clientId}")
	} else {
		c.matcher(path+".ack", w.Ack, "clientId")
	}
	if w.Reject == nil {
		return
	}
	c.matcher(path+".reject", w.Reject, "ref")
	if w.Ack != nil && *w.Reject == *w.Ack && (w.Ack.JSON != "" || w.Ack.Regex != "") {
		field, val := "json", w.Ack.JSON
		if val == "" {
			field, val = "regex", w.Ack.Regex
		}
		c.add(path+".reject."+field, "the same as ack, so every ack would count as a rejection: "+
			"name where a rejection, and not an ack, carries the sent frame's id, e.g. {json: ref}, not %q", val)
	}
}

// matcher checks an ack or reject at path: exactly one of json or regex,
// and a regex that compiles. example is a JSON path for the message.
func (c *checker) matcher(path string, a *Ack, example string) {
	switch {
	case a.JSON == "" && a.Regex == "":
		c.add(path, "want one of json or regex, e.g. {json: %s}", example)
	case a.JSON != "" && a.Regex != "":
		c.add(path+".regex", "want one of json or regex, not both")
	}
	if a.Regex != "" {
		if _, err := regexp.Compile(a.Regex); err != nil {
			c.add(path+".regex", "%v", err)
		}
	}
}

// handshake checks that neither the scenario's headers nor the plan's
// http.headers, which the handshake also sends, set what the WebSocket
// client sets itself; and that the Sec-WebSocket-Protocol header and
// subprotocols are not both given.
func (c *checker) handshake(path string, w *WebSocket) {
	for _, layer := range []struct {
		path, suffix string
		hs           map[string]string
	}{
		{"http.headers", ", and http.headers are sent with it too", c.p.HTTP.Headers},
		{path + ".headers", "", w.Headers},
	} {
		for _, name := range slices.Sorted(maps.Keys(layer.hs)) {
			canon := textproto.CanonicalMIMEHeaderKey(name)
			p := layer.path + "." + name
			switch {
			case slices.Contains(handshakeHeaders, canon):
				c.addOnce(p, "the WebSocket handshake sets %s itself%s", name, layer.suffix)
			case canon == "Sec-Websocket-Protocol" && len(w.Subprotocols) > 0:
				c.addOnce(p, "give a websocket's subprotocols or a %s header, not both%s", name, layer.suffix)
			}
		}
	}
}

// addOnce records a problem at path unless addOnce already recorded the
// same one (a plan-wide value that several scenarios trip over). It keeps a
// set: searching the problems took seconds for a plan with thousands.
func (c *checker) addOnce(path, format string, args ...any) {
	q := c.p.problem(path, format, args...)
	if c.once == nil {
		c.once = map[Problem]bool{}
	}
	if !c.once[q] {
		c.once[q] = true
		c.problems = append(c.problems, q)
	}
}

// wsURLProblem says what is wrong with an absolute ws(s) URL, or "".
// Template actions count as ordinary text.
func wsURLProblem(raw string) string {
	if msg := urlProblem(raw, "ws", "wss", "a"); msg != "" {
		if scheme, rest, ok := strings.Cut(raw, "://"); ok {
			switch strings.ToLower(scheme) {
			case "http":
				return fmt.Sprintf("want a ws:// or wss:// URL, such as %q, not %q", "ws://"+rest, raw)
			case "https":
				return fmt.Sprintf("want a ws:// or wss:// URL, such as %q, not %q", "wss://"+rest, raw)
			}
		}
		return msg
	}
	if strings.Contains(fill(raw), "#") {
		return fmt.Sprintf("want a WebSocket URL without #fragment, not %q", raw)
	}
	return ""
}

// isHeaderToken reports whether s is a non-empty HTTP token (RFC 9110):
// letters, digits and !#$%&'*+-.^_`|~, so no spaces, commas or quotes.
func isHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for _, b := range []byte(s) {
		alnum := b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z'
		if !alnum && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(b)) {
			return false
		}
	}
	return true
}
