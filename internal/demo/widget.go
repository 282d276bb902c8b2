package demo

import (
	"bytes"
	"net/http"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
)

// maxFrame is the largest widget frame or REST body read, in bytes.
const maxFrame = 64 << 10

// widget serves GET /widget: a chat widget's socket. Each text frame like
// {"type":"message","clientId":"abc","site":"s-12","text":"hi"} is one
// visitor message for the frame's site, else the socket's ?site=, else
// "default". A frame without a clientId gets no answer (idle and other
// frames). Otherwise the answer, once the save has committed, is
//
//	{"type":"ack","clientId":<as sent>}                  saved
//	{"type":"ack","clientId":<as sent>,"duplicate":true} saved before
//	{"type":"rejected","ref":<as sent>,"reason":"flood"} the site's flood brake
//	{"type":"rejected","ref":<as sent>,"reason":"store"} the store failed
//
// A rejection names the message in "ref", not "clientId", so a client that
// matches acks by clientId does not take it for an ack. Frames that name no
// site at all (neither field nor query) are not braked: the brake holds back
// a site's visitors, and anonymous traffic is no site's flood.
//
// The per-frame path reads into one reused buffer, makes one string of the
// frame for gjson, and writes the answer from one reused buffer; a saved
// message adds the copies the store keeps.
func (c *chat) widget(w http.ResponseWriter, r *http.Request) {
	conn, err := c.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if !c.track(conn) {
		return
	}
	defer c.untrack(conn)
	conn.SetReadLimit(maxFrame)
	socketSite := r.URL.Query().Get("site")
	var in bytes.Buffer
	out := make([]byte, 0, 128)
	for {
		typ, rd, err := conn.NextReader()
		if err != nil {
			return
		}
		if typ != websocket.TextMessage {
			continue // the next NextReader discards it
		}
		in.Reset()
		if _, err := in.ReadFrom(rd); err != nil {
			return
		}
		out = c.frame(out[:0], in.String(), socketSite)
		if len(out) > 0 && conn.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
	}
}

// frame handles one widget frame and appends its answer, if any, to out.
func (c *chat) frame(out []byte, f, socketSite string) []byte {
	raw := gjson.Get(f, "clientId")
	id, ok := clientID(raw)
	if !ok {
		return out
	}
	site, named := gjson.Get(f, "site").String(), true
	if site == "" {
		site = socketSite
	}
	if site == "" {
		site, named = defaultSite, false
	}
	o, _ := c.accept(site, named, id, gjson.Get(f, "text").String())
	switch o {
	case saved:
		out = append(append(append(out, `{"type":"ack","clientId":`...), raw.Raw...), '}')
	case duplicate:
		out = append(append(append(out, `{"type":"ack","clientId":`...), raw.Raw...), `,"duplicate":true}`...)
	case flooded:
		out = append(append(append(out, `{"type":"rejected","ref":`...), raw.Raw...), `,"reason":"flood"}`...)
	case failed:
		out = append(append(append(out, `{"type":"rejected","ref":`...), raw.Raw...), `,"reason":"store"}`...)
	}
	return out
}
