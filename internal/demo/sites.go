package demo

import (
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// Listing bounds for GET /api/sites/{site}/messages.
const (
	defaultListLimit = 50
	maxListLimit     = keepPerSite
)

func (c *chat) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /widget", c.widget)
	mux.HandleFunc("GET /api/sites/{site}/messages", c.listMessages)
	mux.HandleFunc("POST /api/sites/{site}/messages", c.postMessage)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", `text/plain; version=0.0.4; charset=utf-8`)
		c.writeMetrics(w) // a client that went away is its own problem
	})
}

// listMessages answers the site's newest messages as a JSON array, newest
// last: at most ?limit= (default 50, at most keepPerSite) of
// {"clientId":...,"text":"...","at":"<RFC 3339>"}. A site with no
// messages is [].
func (c *chat) listMessages(w http.ResponseWriter, r *http.Request) {
	limit := defaultListLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSONError(w, http.StatusBadRequest, "limit: want a whole number ≥ 1")
			return
		}
		limit = min(n, maxListLimit)
	}
	msgs := c.store.list(r.PathValue("site"), limit)
	b := make([]byte, 0, 64+len(msgs)*96)
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, `{"clientId":`...), m.id...)
		b = appendString(append(b, `,"text":`...), m.text)
		b = append(m.at.UTC().AppendFormat(append(b, `,"at":"`...), time.RFC3339Nano), `"}`...)
	}
	b = append(b, "]\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// postMessage takes {"clientId":...,"text":"..."} through the same path as
// a widget frame (brake → save → job) and answers 200
// {"clientId":...,"saved":true} (with "duplicate":true if it was saved
// before), 429 with Retry-After when the site's flood brake holds it back,
// 400 without a clientId, 413 for a body over 64 KiB, 500 if the store
// failed.
func (c *chat) postMessage(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFrame+1))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "read body")
		return
	}
	if len(body) > maxFrame {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "body over 64 KiB")
		return
	}
	f := string(body)
	raw := gjson.Get(f, "clientId")
	id, ok := clientID(raw)
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "clientId required: a non-empty string or a number")
		return
	}
	o, wait := c.accept(r.PathValue("site"), true, id, gjson.Get(f, "text").String())
	b := append(append(make([]byte, 0, 64), `{"clientId":`...), raw.Raw...)
	switch o {
	case flooded:
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
		writeJSONError(w, http.StatusTooManyRequests, "flood")
		return
	case failed:
		writeJSONError(w, http.StatusInternalServerError, "store failed")
		return
	case duplicate:
		b = append(b, `,"saved":true,"duplicate":true}`...)
	default:
		b = append(b, `,"saved":true}`...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(appendString([]byte(`{"error":`), msg))
	w.Write([]byte("}\n"))
}
