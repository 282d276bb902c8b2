package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// listed is one entry of GET /api/sites/{site}/messages.
type listed struct {
	ClientID json.RawMessage `json:"clientId"`
	Text     string          `json:"text"`
	At       string          `json:"at"`
}

func list(t *testing.T, s *Server, c *http.Client, site, query string) []listed {
	t.Helper()
	code, _, body := call(t, c, http.MethodGet, s.URL()+"/api/sites/"+site+"/messages"+query, "")
	if code != http.StatusOK {
		t.Fatalf("GET messages of %s = %d %s, want 200", site, code, body)
	}
	var out []listed
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("GET messages of %s: %v in %s", site, err, body)
	}
	return out
}

func ids(ms []listed) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.ClientID)
	}
	return out
}

// Frames are acked with the clientId as sent; a repeated clientId is acked
// as a duplicate and saved once; a frame without a clientId gets no answer.
func TestWidgetAcks(t *testing.T) {
	s, c := start(t, Config{})
	conn := dial(t, s, "/widget?site=s-1")
	steps := []struct{ send, want string }{
		{`{"type":"message","clientId":"a","text":"hi"}`, `{"type":"ack","clientId":"a"}`},
		{`{"type":"message","clientId":42,"text":"number id"}`, `{"type":"ack","clientId":42}`},
		{`{"type":"message","clientId":"a","text":"again"}`, `{"type":"ack","clientId":"a","duplicate":true}`},
		{`{"type":"message","clientId":"b","site":"s-2","text":"other site"}`, `{"type":"ack","clientId":"b"}`},
		{`{"type":"message","clientId":"a","site":"s-2","text":"same id, other site"}`, `{"type":"ack","clientId":"a"}`},
	}
	for _, st := range steps {
		if got := exchange(t, conn, st.send); got != st.want {
			t.Errorf("send %s: got %s, want %s", st.send, got, st.want)
		}
	}
	// No answer to these: the next frame read is the ack of "c".
	send(t, conn, `{"type":"typing"}`)
	send(t, conn, `{"type":"message","clientId":"","text":"empty id"}`)
	send(t, conn, `{"type":"message","clientId":null}`)
	send(t, conn, `not json`)
	if got, want := exchange(t, conn, `{"clientId":"c","text":"x"}`), `{"type":"ack","clientId":"c"}`; got != want {
		t.Errorf("after frames without clientId: got %s, want %s (no answer to those)", got, want)
	}
	got := list(t, s, c, "s-1", "")
	if diff := cmp.Diff([]string{`"a"`, `42`, `"c"`}, ids(got)); diff != "" {
		t.Errorf("messages of s-1 (-want +got):\n%s", diff)
	}
	if len(got) > 0 && got[0].Text != "hi" {
		t.Errorf("first message text = %q, want the first save's %q", got[0].Text, "hi")
	}
	if diff := cmp.Diff([]string{`"b"`, `"a"`}, ids(list(t, s, c, "s-2", ""))); diff != "" {
		t.Errorf("messages of s-2 (-want +got):\n%s", diff)
	}
	fams := scrape(t, s, c)
	if saved, dup := value(t, fams, "demo_messages_saved_total"), value(t, fams, "demo_messages_duplicate_total"); saved != 5 || dup != 1 {
		t.Errorf("saved, duplicates = %v, %v; want 5, 1", saved, dup)
	}
	if n := value(t, fams, "demo_ws_connections"); n != 1 {
		t.Errorf("demo_ws_connections = %v, want 1", n)
	}
}

// The brake holds back a flooded site with "rejected" frames carrying
// "ref", while another site and frames naming no site go through.
func TestWidgetFloodBrake(t *testing.T) {
	s, c := start(t, Config{FloodRate: 0.1, FloodBurst: 3}) // a token every 10 s: none come back during the test
	conn := dial(t, s, "/widget")
	for i := range 5 {
		want := fmt.Sprintf(`{"type":"ack","clientId":"f%d"}`, i)
		if i >= 3 {
			want = fmt.Sprintf(`{"type":"rejected","ref":"f%d","reason":"flood"}`, i)
		}
		if got := exchange(t, conn, fmt.Sprintf(`{"clientId":"f%d","site":"flooded","text":"x"}`, i)); got != want {
			t.Errorf("frame %d to the flooded site: got %s, want %s", i, got, want)
		}
	}
	if got, want := exchange(t, conn, `{"clientId":"o1","site":"other","text":"x"}`), `{"type":"ack","clientId":"o1"}`; got != want {
		t.Errorf("another site: got %s, want %s", got, want)
	}
	for i := range 5 {
		if got, want := exchange(t, conn, fmt.Sprintf(`{"clientId":"d%d"}`, i)), fmt.Sprintf(`{"type":"ack","clientId":"d%d"}`, i); got != want {
			t.Errorf("frame %d naming no site: got %s, want %s (not braked)", i, got, want)
		}
	}
	code, h, body := call(t, c, http.MethodPost, s.URL()+"/api/sites/flooded/messages", `{"clientId":"r1","text":"x"}`)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("POST to the flooded site = %d %s Retry-After %q, want 429 with Retry-After", code, body, h.Get("Retry-After"))
	}
	if n := len(list(t, s, c, "flooded", "")); n != 3 {
		t.Errorf("flooded site has %d messages, want 3", n)
	}
	if n := value(t, scrape(t, s, c), "demo_flood_rejected_total"); n != 3 {
		t.Errorf("demo_flood_rejected_total = %v, want 3", n)
	}
}

// The demo's plan names the brake's rejection, so that a braked message
// counts as limited: its reject regex finds the message's clientId in the
// frame the brake sends, and nothing in a store failure's (a failure, not
// a design) or an ack.
func TestPlanRejectsTheBrakesAnswer(t *testing.T) {
	text := Plan(PlanConfig{Exe: "ceiling", TargetPort: 1, SinkPort: 2, Step: time.Second, Warmup: time.Second})
	m := regexp.MustCompile(`(?m)^\s+reject: \{regex: '([^']+)'\}`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the demo plan names no reject regex:\n%s", text)
	}
	re := regexp.MustCompile(m[1])
	s, _ := start(t, Config{FloodRate: 0.1, FloodBurst: 1})
	conn := dial(t, s, "/widget?site=flooded")
	if got := exchange(t, conn, `{"clientId":"a1","text":"x"}`); re.MatchString(got) {
		t.Errorf("reject %s matches the ack %s", re, got)
	}
	got := exchange(t, conn, `{"clientId":"b2","text":"x"}`)
	if g := re.FindStringSubmatch(got); g == nil || g[1] != "b2" {
		t.Errorf("reject %s on the brake's answer %s = %q, want the clientId b2", re, got, g)
	}
	if store := `{"type":"rejected","ref":"c3","reason":"store"}`; re.MatchString(store) {
		t.Errorf("reject %s matches a store failure %s", re, store)
	}
}

// REST posts take the widget's path; listing honours ?limit=.
func TestSiteMessagesREST(t *testing.T) {
	s, c := start(t, Config{})
	url := s.URL() + "/api/sites/s-9/messages"
	tests := []struct {
		body     string
		code     int
		response string
	}{
		{`{"clientId":"m1","text":"one"}`, 200, `{"clientId":"m1","saved":true}` + "\n"},
		{`{"clientId":"m1","text":"one"}`, 200, `{"clientId":"m1","saved":true,"duplicate":true}` + "\n"},
		{`{"clientId":"m2","text":"two \"quoted\"\n"}`, 200, `{"clientId":"m2","saved":true}` + "\n"},
		{`{"text":"no id"}`, 400, ""},
		{`{"clientId":{"x":1}}`, 400, ""},
	}
	for _, tt := range tests {
		code, _, body := call(t, c, http.MethodPost, url, tt.body)
		if code != tt.code || (tt.response != "" && body != tt.response) {
			t.Errorf("POST %s = %d %q, want %d %q", tt.body, code, body, tt.code, tt.response)
		}
	}
	for i := range 60 {
		call(t, c, http.MethodPost, url, fmt.Sprintf(`{"clientId":"n%d","text":"x"}`, i))
	}
	all := list(t, s, c, "s-9", "?limit=1000")
	if len(all) != 62 || all[1].Text != "two \"quoted\"\n" || string(all[61].ClientID) != `"n59"` {
		t.Errorf("limit=1000: %d messages, second %q, last %s; want 62, the quoted text, n59 last", len(all), all[1].Text, all[len(all)-1].ClientID)
	}
	if n := len(list(t, s, c, "s-9", "")); n != 50 {
		t.Errorf("default listing has %d messages, want 50", n)
	}
	if got := list(t, s, c, "s-9", "?limit=2"); len(got) != 2 || string(got[1].ClientID) != `"n59"` {
		t.Errorf("limit=2: %v, want n58, n59", ids(got))
	}
	if got := list(t, s, c, "nobody", ""); len(got) != 0 {
		t.Errorf("unknown site: %v, want []", got)
	}
	if code, _, _ := call(t, c, http.MethodGet, url+"?limit=x", ""); code != 400 {
		t.Errorf("limit=x: %d, want 400", code)
	}
	// The example API's routes are still there.
	if code, _, _ := call(t, c, http.MethodGet, s.URL()+"/api/messages", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /api/messages without a token = %d, want 401", code)
	}
}
