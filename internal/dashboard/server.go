package dashboard

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/report"
)

// Options say where the page is served.
type Options struct {
	// Addr is HOST:PORT, or :PORT for loopback (127.0.0.1).
	Addr string
	// Token guards the page; it is required for an address beyond
	// loopback, and optional on loopback ("" asks for none).
	Token string
}

// cookiePrefix, and the page's port, name the cookie a request with the
// right token sets, so that the page's event stream and its link to the
// report need no token in their addresses. Its Path is livePath, where
// the stream and the report are: a browser sends it to no other path of
// the host (it does send it to every port's: cookies know no port, hence
// the port in its name, so that two pages of one host keep their own).
const cookiePrefix = "ceiling_dashboard_"

// livePath holds the page's event stream and its report.
const livePath = "/live/"

// closeWait bounds how long Close waits for open pages to take the end.
const closeWait = 3 * time.Second

// writeTimeout bounds each write to a client of the page or the report:
// a client that stops reading is dropped, never waited for.
const writeTimeout = 10 * time.Second

// streamWrite bounds each event's write, and streamBuffer the event
// stream's send buffer: a viewer that has not taken the last event or
// two (a body is a few hundred KB) is dropped within seconds, rather than
// have the page write every body to it. Its browser reconnects, and
// takes the latest.
const (
	streamWrite  = 2 * time.Second
	streamBuffer = 64 << 10
)

// Server serves the live page.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	token  string
	cookie string // the token's cookie's name
	url    string // the page's address, without its token
	// hosts are the names a request may give in its Host header when
	// the page has no token: a page of another site whose name leads to
	// this machine (DNS rebinding) gives its own, and is refused.
	hosts   []string
	closing chan struct{}
	// closeOnce makes Close safe to call again.
	closeOnce sync.Once

	mu     sync.Mutex
	title  string
	body   string
	seq    uint64
	ended  bool
	report []byte        // the report's page once the run ended, nil before or without one
	news   chan struct{} // closed at each publish, then replaced
	// streams counts the event streams open; ends those sent the end,
	// reports the reports served after it: Close waits for both.
	streams, ends, reports int
	// streamsBy counts the open event streams by IP address.
	streamsBy map[string]int
}

// Listen starts serving the page at o.Addr. An address beyond loopback
// without a token is refused, as is a token on a port that is in use.
func Listen(o Options) (*Server, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("--dashboard %s: want HOST:PORT or :PORT: %w", o.Addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !Loopback(host) && o.Token == "" {
		return nil, fmt.Errorf("--dashboard %s: an address beyond loopback needs --dashboard-token (anyone who reaches it would see the run)", o.Addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("--dashboard %s: %w", o.Addr, err)
	}
	s := &Server{ln: newCapped(ln), token: o.Token, closing: make(chan struct{}), news: make(chan struct{}), title: "ceiling",
		url: pageURL(host, ln.Addr()), streamsBy: map[string]int{}}
	_, bound, _ := net.SplitHostPort(ln.Addr().String())
	s.cookie = cookiePrefix + bound
	s.hosts = []string{"localhost", strings.Trim(host, "[]")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.guard(s.page))
	mux.HandleFunc("GET "+livePath+"events", s.guard(s.events))
	mux.HandleFunc("GET "+livePath+"report", s.guard(s.serveReport))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second,
		MaxHeaderBytes: 16 << 10, ConnContext: withConn}
	go func() { _ = s.srv.Serve(s.ln) }()
	return s, nil
}

// pageURL is the address of a page listening at bound, asked for on
// host: the host as it was given (0.0.0.0 is every address of the
// machine, and is printed so), with the port bound.
func pageURL(host string, bound net.Addr) string {
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return "http://" + bound.String() + "/"
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), port) + "/"
}

// Loopback reports whether host (a name or an address) is this machine's
// loopback: localhost, 127.0.0.0/8 or ::1.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Addr is the page's address without its token: http://HOST:PORT/, with
// the host as it was asked for.
func (s *Server) Addr() string { return s.url }

// URL is the page's address, with the token when it has one.
func (s *Server) URL() string {
	u := s.url
	if s.token != "" {
		u += "?token=" + s.token
	}
	return u
}

// Publish makes title and body (HTML, escaped by its maker) the page's
// content and sends it to every open page.
func (s *Server) Publish(title, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.set(title, body)
}

// End publishes the run's last title and body and says it has ended,
// with a link to report (a whole HTML page) when it is not nil. An open
// page fetches the report at once and keeps it, so that its link works
// after ceiling has exited.
func (s *Server) End(title, body string, report []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended, s.report = true, report
	s.set(title, body)
}

// set publishes; the caller holds mu.
func (s *Server) set(title, body string) {
	s.title, s.body = title, body
	s.seq++
	close(s.news)
	s.news = make(chan struct{})
}

// Close stops serving: open pages keep what they last showed. After End it
// first waits, a few seconds at most, for the open pages to take the end
// and the report.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.close() })
	return err
}

func (s *Server) close() error {
	for deadline := time.Now().Add(closeWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		waiting := s.ended && (s.streams > 0 || s.report != nil && s.reports < s.ends)
		s.mu.Unlock()
		if !waiting {
			break
		}
	}
	close(s.closing)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// snapshot is what the page shows now.
type snapshot struct {
	title, body string
	seq         uint64
	ended       bool
	report      bool
	news        <-chan struct{}
}

func (s *Server) now() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{title: s.title, body: s.body, seq: s.seq, ended: s.ended, report: s.report != nil, news: s.news}
}

// guard lets a request through when the server has no token and the
// request names it by a loopback name (hostAllowed), or when the request
// carries the token (query or cookie); one with it in the query gets the
// cookie.
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.token == "" && !s.hostAllowed(r.Host) {
			http.Error(w, "this page answers to its loopback address only (127.0.0.1, ::1, localhost)", http.StatusMisdirectedRequest)
			return
		}
		if s.token != "" {
			given := r.URL.Query().Get("token")
			if c, err := r.Cookie(s.cookie); given == "" && err == nil {
				given = c.Value
			}
			if subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) != 1 {
				http.Error(w, "this page needs the token: open the address ceiling printed, with ?token=", http.StatusUnauthorized)
				return
			}
			if r.URL.Query().Has("token") {
				http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: livePath, HttpOnly: true, SameSite: http.SameSiteStrictMode})
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h(w, r)
	}
}

// hostAllowed reports whether a request's Host header (a name or an
// address, with a port or not) names this page: a loopback address,
// localhost, or the address it was asked to listen on.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range s.hosts {
		if h != "" && strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// page writes the page with the latest body in it.
func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	now := s.now()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page's own script only: no other source, no frames.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:")
	state := "Live: updated every second."
	if now.ended {
		state = ended(now.report)
	}
	body := fmt.Sprintf("<p id=\"state\" class=\"state\">%s</p>\n<div id=\"live\" data-seq=\"%d\">%s</div>\n<script>%s</script>\n", state, now.seq, now.body, script)
	_ = report.Page(w, now.title, style, body)
}

// ended is the state line of a page whose run has ended.
func ended(withReport bool) string {
	if withReport {
		return "The run has ended: this is its final answer. <a href=\"live/report\">Open the report</a>."
	}
	return "The run has ended: this is its final answer."
}

// events streams the page's bodies as they come, as server-sent events:
// "body" with the title on its first line and the body after it, then
// "end" with the state line when the run has ended.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	c := connOf(r.Context())
	ip := ""
	if c != nil {
		ip = c.ip
	}
	s.mu.Lock()
	if s.streams >= maxStreams || s.streamsBy[ip] >= maxStreamsPerAddr {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many viewers of this page at once", http.StatusServiceUnavailable)
		return
	}
	s.streams++
	s.streamsBy[ip]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.streams--
		if s.streamsBy[ip]--; s.streamsBy[ip] <= 0 {
			delete(s.streamsBy, ip)
		}
		s.mu.Unlock()
	}()
	if c != nil {
		if b, ok := c.Conn.(interface{ SetWriteBuffer(int) error }); ok {
			_ = b.SetWriteBuffer(streamBuffer)
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	var last uint64
	first := true
	for {
		now := s.now()
		if first || now.seq != last {
			if !send(rc, w, "body", now.title+"\n"+now.body, now.seq) {
				return
			}
			first, last = false, now.seq
		}
		if now.ended {
			if send(rc, w, "end", ended(now.report), now.seq) {
				s.mu.Lock()
				s.ends++
				s.mu.Unlock()
			}
			return
		}
		select {
		case <-now.news:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

// send writes one event; false when the client is gone or too slow.
func send(rc *http.ResponseController, w http.ResponseWriter, event, data string, id uint64) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(streamWrite))
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\nid: %d\n", event, id)
	for line := range strings.Lines(data) {
		b.WriteString("data: ")
		b.WriteString(strings.TrimRight(line, "\r\n"))
		b.WriteByte('\n')
	}
	if data == "" {
		b.WriteString("data:\n")
	}
	b.WriteByte('\n')
	if _, err := w.Write([]byte(b.String())); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// serveReport serves the run's report once the run has ended.
func (s *Server) serveReport(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	data := s.report
	if data != nil {
		s.reports++
	}
	s.mu.Unlock()
	if data == nil {
		http.Error(w, "the report is made when the run ends", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:")
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	_, _ = w.Write(data)
}

// style is the live page's own rules, after the report's.
const style = `.state{color:#555;border-left:4px solid #2ca02c;padding-left:.7em}.state.ended{border-color:#1f77b4}`

// script keeps the page current: each "body" event replaces the title
// and the body, "end" says the run ended. data-seq and data-bodies on
// #live say which body is shown and how many came (the tests read them).
const script = `(function(){
var live=document.getElementById('live'),state=document.getElementById('state'),bodies=0;
var es=new EventSource('live/events');
es.addEventListener('body',function(e){
  var i=e.data.indexOf('\n'),title=i<0?e.data:e.data.slice(0,i);
  document.title=title;var h=document.querySelector('h1');if(h){h.textContent=title;}
  live.innerHTML=i<0?'':e.data.slice(i+1);live.dataset.seq=e.lastEventId;live.dataset.bodies=++bodies;
});
es.addEventListener('end',function(e){
  state.innerHTML=e.data;state.className='state ended';es.close();
  var a=state.querySelector('a');
  if(!a){live.dataset.ended='1';return;}
  fetch('live/report').then(function(r){return r.ok?r.blob():null;}).then(function(b){
    if(b){a.href=URL.createObjectURL(b);}live.dataset.ended='1';
  },function(){live.dataset.ended='1';});
});
es.onerror=function(){if(live.dataset.ended!=='1'){state.textContent='Waiting for ceiling: the page updates again when it answers.';}};
})();`
