package demo

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// api is the small REST service the example plans load, in two common
// shapes: a messaging gateway with instances, messages sent with
// idempotency keys and a per-project rate limit, and a web app whose pages
// need a session cookie and otherwise redirect to /login.
type api struct {
	mu       sync.Mutex
	tokens   map[string]string    // bearer token → email
	sessions map[string]string    // session cookie → email
	keys     map[string]time.Time // idempotency keys seen
	buckets  map[string]*bucket   // rate limit per project
	limit    float64              // sends per second per project
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newAPI(limit float64) *api {
	return &api{
		tokens: map[string]string{}, sessions: map[string]string{},
		keys: map[string]time.Time{}, buckets: map[string]*bucket{}, limit: limit,
	}
}

func (a *api) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/login", a.login)
	mux.HandleFunc("GET /api/messages", a.authed(a.listMessages))
	mux.HandleFunc("GET /api/instances/{id}/status", a.authed(a.status))
	mux.HandleFunc("POST /api/messages", a.authed(a.sendMessage))
	mux.HandleFunc("GET /login", a.loginPage)
	mux.HandleFunc("POST /login", a.formLogin)
	mux.HandleFunc("GET /dashboard", a.page("Dashboard", 6800))
	mux.HandleFunc("GET /billing", a.page("Billing", 7300))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeHTML(w, "Welcome", 75000)
	})
}

func token() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (a *api) login(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email string `json:"email"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !strings.Contains(in.Email, "@") {
		http.Error(w, `{"error":"email required"}`, http.StatusBadRequest)
		return
	}
	t := token()
	a.mu.Lock()
	a.tokens[t] = in.Email
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"token":%q,"email":%q}`, t, in.Email)
}

// authed wraps h with a bearer-token check: 401 without a valid token.
func (a *api) authed(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		email, ok := a.tokens[t]
		a.mu.Unlock()
		if !ok {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		h(w, r, email)
	}
}

func (a *api) listMessages(w http.ResponseWriter, _ *http.Request, email string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"owner":%q,"messages":[`, email)
	for i := range 20 {
		if i > 0 {
			w.Write([]byte(","))
		}
		fmt.Fprintf(w, `{"id":%d,"text":"message %d","status":"DELIVERED"}`, i, i)
	}
	w.Write([]byte("]}\n"))
}

func (a *api) status(w http.ResponseWriter, r *http.Request, _ string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"instance":%q,"state":"CONNECTED"}`+"\n", r.PathValue("id"))
}

// sendMessage accepts a message once per Idempotency-Key (a repeat is 409)
// and at most limit per second per project (X-Project, default "p"); past
// it, 429 with Retry-After.
func (a *api) sendMessage(w http.ResponseWriter, r *http.Request, _ string) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		http.Error(w, `{"error":"Idempotency-Key required"}`, http.StatusBadRequest)
		return
	}
	project := r.Header.Get("X-Project")
	if project == "" {
		project = "p"
	}
	now := time.Now()
	a.mu.Lock()
	b, ok := a.buckets[project]
	if !ok {
		b = &bucket{tokens: a.limit, last: now}
		a.buckets[project] = b
	}
	b.tokens = min(a.limit, b.tokens+now.Sub(b.last).Seconds()*a.limit)
	b.last = now
	limited := b.tokens < 1
	_, dup := a.keys[key]
	if !limited && !dup {
		b.tokens--
		a.keys[key] = now
	}
	a.mu.Unlock()
	switch {
	case limited:
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"RATE_LIMITED"}`, http.StatusTooManyRequests)
	case dup:
		http.Error(w, `{"error":"duplicate Idempotency-Key"}`, http.StatusConflict)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"accepted":true,"key":%q}`+"\n", key)
	}
}

func (a *api) loginPage(w http.ResponseWriter, _ *http.Request) { writeHTML(w, "Log in", 8500) }

// formLogin sets the session cookie for the posted email and redirects to
// the dashboard.
func (a *api) formLogin(w http.ResponseWriter, r *http.Request) {
	email := r.FormValue("email")
	if !strings.Contains(email, "@") {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	sid := token()
	a.mu.Lock()
	a.sessions[sid] = email
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "session", Value: sid, Path: "/", HttpOnly: true})
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}

// page serves an HTML page of about size bytes to a logged-in user, and
// redirects everyone else to /login, as SaaS apps do.
func (a *api) page(title string, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		a.mu.Lock()
		_, ok := a.sessions[valueOf(c, err)]
		a.mu.Unlock()
		if !ok {
			http.Redirect(w, r, "/login", http.StatusTemporaryRedirect)
			return
		}
		writeHTML(w, title, size)
	}
}

func valueOf(c *http.Cookie, err error) string {
	if err != nil {
		return ""
	}
	return c.Value
}

func writeHTML(w http.ResponseWriter, title string, size int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	head := fmt.Sprintf("<!doctype html><title>%s</title><h1>%s</h1><p>", title, title)
	w.Write([]byte(head))
	w.Write([]byte(strings.Repeat("x", max(size-len(head)-5, 0))))
	w.Write([]byte("</p>\n"))
}
