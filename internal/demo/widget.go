package demo

import (
	"net/http"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
)

// widget is the demo's websocket endpoint: each text frame with a clientId
// is acknowledged at once with {"type":"ack","clientId":...}, as a chat
// widget backend confirms a saved message. Frames without a clientId are
// ignored; sockets may also stay idle (the idle soak).
func widget() http.HandlerFunc {
	up := websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 1024, CheckOrigin: func(*http.Request) bool { return true }}
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadLimit(64 << 10)
		out := make([]byte, 0, 128)
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			id := gjson.GetBytes(msg, "clientId")
			if !id.Exists() {
				continue
			}
			out = append(append(append(out[:0], `{"type":"ack","clientId":`...), id.Raw...), '}')
			if c.WriteMessage(websocket.TextMessage, out) != nil {
				return
			}
		}
	}
}
