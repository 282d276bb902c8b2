package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocket returns a handler that upgrades every request with up and
// serves the connection with serve, closing it when serve returns. A
// request that is no WebSocket handshake gets up's error answer.
func WebSocket(up websocket.Upgrader, serve func(c *websocket.Conn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	})
}

// NewWebSocket starts a loopback server that serves every connection with
// serve (WebSocket with the default upgrader) and returns it; the test's
// cleanup closes it. WSURL gives its ws:// address.
func NewWebSocket(tb testing.TB, serve func(c *websocket.Conn)) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(WebSocket(websocket.Upgrader{}, serve))
	tb.Cleanup(srv.Close)
	return srv
}

// WSURL turns a server's http:// URL into the ws:// one (https:// into
// wss://).
func WSURL(httpURL string) string { return "ws" + strings.TrimPrefix(httpURL, "http") }

// Echo sends every message back as it came, of the same type, until the
// connection fails or closes.
func Echo(c *websocket.Conn) {
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil || c.WriteMessage(mt, msg) != nil {
			return
		}
	}
}

// Ack answers every JSON frame with the frame's id, as a service that
// acknowledges the messages it is sent does.
type Ack struct {
	// Field is the frame's top-level JSON field that holds its id; empty
	// means "clientId". A frame without it is answered with an empty id.
	Field string
	// Delay is how long each answer waits; zero answers at once.
	Delay time.Duration
	// Reply is the answer as a fmt format with one %q verb, the id; empty
	// means {"<Field>":%q}.
	Reply string
}

// Serve answers the frames of c, one after the other, until the
// connection fails or closes.
func (a Ack) Serve(c *websocket.Conn) {
	field := a.Field
	if field == "" {
		field = "clientId"
	}
	reply := a.Reply
	if reply == "" {
		reply = fmt.Sprintf("{%q:%%q}", field)
	}
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		var in map[string]any
		json.Unmarshal(msg, &in)
		id, _ := in[field].(string)
		if a.Delay > 0 {
			time.Sleep(a.Delay)
		}
		if c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, reply, id)) != nil {
			return
		}
	}
}
