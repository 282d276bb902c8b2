package draft

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// MaxHARBytes bounds a HAR file: a recording with response bodies of a
// long session is tens of megabytes.
const MaxHARBytes = 256 << 20

// The parts of a HAR 1.2 file (http://www.softwareishard.com/blog/har-12-spec/)
// a draft reads; Chrome's and Firefox's "Save all as HAR" write them.
type harFile struct {
	Log struct {
		Entries []harEntry `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"` // milliseconds
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	ResourceType    string      `json:"_resourceType"` // Chrome's
}

type harRequest struct {
	Method   string       `json:"method"`
	URL      string       `json:"url"`
	Headers  []harNV      `json:"headers"`
	PostData *harPostData `json:"postData"`
	Cookies  []harNV      `json:"cookies"`
}

type harPostData struct {
	MimeType string  `json:"mimeType"`
	Text     string  `json:"text"`
	Params   []harNV `json:"params"`
}

type harResponse struct {
	Status  int     `json:"status"`
	Headers []harNV `json:"headers"`
	Cookies []harNV `json:"cookies"`
	Content struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Encoding string `json:"encoding"`
	} `json:"content"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// entry is a recorded exchange a draft keeps, with what the analysis
// found.
type entry struct {
	harEntry
	index  int // in the recording, after sorting by time
	start  time.Time
	base   string // origin
	rest   string // path and query
	body   string // the response body, decoded
	offers []offer
	used   map[string]bool // offers a later request uses, by name
	req    *request
	login  bool // mix: runs in the plan's login
	// user is the user information of the recorded URL ("user:password"),
	// which the browser sent as Basic authentication; "" for none.
	user string
}

// offer is a value an answer handed out and how to extract it.
type offer struct {
	value string
	ex    extraction
}

// FromHAR drafts a plan from a HAR recording: a weighted mix of its
// endpoints, or with o.Flow one flow in its recorded order. name is the
// file's name, for messages.
func FromHAR(name string, data []byte, o Options) (*Draft, error) {
	if len(data) > MaxHARBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, MaxHARBytes>>20)
	}
	var f harFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonError(data, err))
	}
	if len(f.Log.Entries) == 0 {
		return nil, fmt.Errorf("%s: no entries in log.entries: is it a HAR file?", name)
	}
	s := newSketch(o)
	s.closed = true
	entries := make([]*entry, len(f.Log.Entries))
	for i := range f.Log.Entries {
		e := &entry{harEntry: f.Log.Entries[i], used: map[string]bool{}}
		e.start, _ = time.Parse(time.RFC3339Nano, e.StartedDateTime)
		entries[i] = e
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].start.Before(entries[j].start) })
	kept, left := s.keep(entries, o)
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: no request is left to load: %s", name, strings.Join(left, "; "))
	}
	s.target = cmp(o.Target, kept[0].base)
	s.name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	s.think, s.thinkNote = thinkTime(kept)
	for _, e := range kept {
		e.body = responseBody(e)
		e.offers = offers(e)
	}
	h := newHanded()
	for _, e := range kept {
		req, err := s.harRequest(e, h)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d (%s %s): %w", name, e.index+1, e.Request.Method, e.Request.URL, err)
		}
		e.req = req
		h.add(e)
	}
	for _, e := range kept {
		for _, of := range e.offers {
			if e.used[of.ex.name] {
				e.req.extract = append(e.req.extract, of.ex)
			}
		}
	}
	if o.Flow {
		s.flow(kept)
	} else {
		s.mix(kept)
	}
	if len(left) > 0 {
		s.note("Left out of the recording: %s.", strings.Join(left, "; "))
	}
	shape := "a weighted mix of its endpoints (weights: how often each was called)"
	if o.Flow {
		shape = "one flow of its requests in recorded order"
	}
	s.header = []string{
		fmt.Sprintf("A plan drafted by ceiling init from %d request%s of the recording %s: %s, by virtual users that pause as the recording did.", len(kept), plural(len(kept)), filepath.Base(name), shape),
		s.readIt(),
	}
	return s.draft(), nil
}

// jsonError places a JSON error at line:col of data.
func jsonError(data []byte, err error) error {
	var offset int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 || offset > int64(len(data)) {
		return err
	}
	offset = max(offset-1, 0) // the offset is past the byte at fault
	line := 1 + bytes.Count(data[:offset], []byte("\n"))
	col := int(offset) - bytes.LastIndexByte(data[:offset], '\n')
	return fmt.Errorf("%d:%d: %w", line, col, err)
}

// staticTypes are Chrome's resource types of static assets.
var staticTypes = []string{"script", "stylesheet", "image", "font", "media", "manifest", "texttrack"}

// staticExts are the file extensions of static assets.
var staticExts = []string{".js", ".mjs", ".css", ".map", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".avif",
	".bmp", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp4", ".webm", ".mp3", ".ogg", ".wav", ".webmanifest"}

// isStatic reports whether an entry fetched a static asset.
func isStatic(e *entry) bool {
	if slices.Contains(staticTypes, e.ResourceType) {
		return true
	}
	if e.ResourceType == "document" || e.ResourceType == "xhr" || e.ResourceType == "fetch" {
		return false
	}
	p, _, _ := strings.Cut(e.rest, "?")
	if slices.Contains(staticExts, strings.ToLower(path.Ext(p))) {
		return true
	}
	mime := strings.ToLower(e.Response.Content.MimeType)
	for _, m := range []string{"image/", "font/", "text/css", "javascript", "video/", "audio/"} {
		if strings.Contains(mime, m) {
			return true
		}
	}
	return false
}

// keep chooses the entries a plan loads: requests to the recording's
// main origin that were answered, not static (unless asked), not
// preflights, not websockets. It says what it left out, and why.
func (s *sketch) keep(entries []*entry, o Options) (kept []*entry, left []string) {
	var reasons tally[reason]
	var others tally[string] // the hosts of requests to other origins
	http, main := httpEntries(entries, &reasons)
	for _, e := range http {
		if e.base != main {
			others.add(hostName(e.base))
			continue
		}
		if why, out := leftOut(e, o); out {
			reasons.add(why)
			continue
		}
		kept = append(kept, e)
	}
	for _, why := range reasons.order {
		n, what := reasons.n[why], why.many
		if n == 1 {
			what = why.one
		}
		left = append(left, fmt.Sprintf("%d %s", n, what))
	}
	if len(others.order) > 0 {
		var hs []string
		for _, h := range others.order {
			hs = append(hs, fmt.Sprintf("%s (%d)", h, others.n[h]))
		}
		left = append(left, "requests to other hosts than the target's: "+strings.Join(hs, ", "))
	}
	return kept, left
}

// httpEntries returns the entries of http(s) requests, their origin and
// the rest of their URL set, and the recording's main origin: the one
// most of its requests but static assets went to (the first of those
// tied), or the first request's when all are static. It tallies the
// others in reasons.
func httpEntries(entries []*entry, reasons *tally[reason]) (http []*entry, main string) {
	var bases tally[string] // the origins of requests but static assets
	for i, e := range entries {
		e.index = i
		raw, user := withoutUser(e.Request.URL)
		e.user = user
		base, rest, err := splitURL(raw)
		if err != nil || !strings.HasPrefix(strings.ToLower(e.Request.URL), "http") {
			reasons.add(reason{"request that is not http(s)", "requests that are not http(s)"})
			continue
		}
		e.base, e.rest = base, rest
		if !isStatic(e) {
			bases.add(base)
		}
		http = append(http, e)
	}
	for _, b := range bases.order {
		if bases.n[b] > bases.n[main] {
			main = b
		}
	}
	if main == "" && len(http) > 0 {
		main = http[0].base // static assets only
	}
	return http, main
}

// leftOut says why a plan does not load an entry of the main origin, if
// it does not: a static asset (unless o.KeepStatic), a websocket, a
// request not answered, of no valid method, a CORS preflight, or one
// answered 4xx or 5xx.
func leftOut(e *entry, o Options) (reason, bool) {
	switch {
	case !o.KeepStatic && isStatic(e):
		return reason{"static asset (--keep-static keeps them)", "static assets (--keep-static keeps them)"}, true
	case e.Response.Status == 101 || e.ResourceType == "websocket":
		return reason{"websocket", "websockets"}, true
	case e.Response.Status < 200 || e.Response.Status > 599:
		return reason{"request that got no answer (blocked or cancelled)", "requests that got no answer (blocked or cancelled)"}, true
	case !isScheme(e.Request.Method) || strings.Contains(e.Request.Method, "-"):
		return reason{"request with no valid method", "requests with no valid method"}, true
	case strings.EqualFold(e.Request.Method, "OPTIONS"):
		return reason{"CORS preflight", "CORS preflights"}, true
	case e.Response.Status >= 400:
		return reason{"request answered 4xx or 5xx", "requests answered 4xx or 5xx"}, true
	}
	return reason{}, false
}

// tally counts things, in the order they first came.
type tally[K comparable] struct {
	n     map[K]int
	order []K
}

// add counts k once more.
func (t *tally[K]) add(k K) {
	if t.n == nil {
		t.n = map[K]int{}
	}
	if t.n[k] == 0 {
		t.order = append(t.order, k)
	}
	t.n[k]++
}

// withoutUser returns a recorded URL without its user information, the
// rest of it as it was, and that information as "user:password"
// (decoded), "" when it has none.
func withoutUser(raw string) (string, string) {
	scheme, after, ok := strings.Cut(raw, "://")
	if !ok {
		return raw, ""
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndexByte(after[:end], '@')
	if at < 0 {
		return raw, ""
	}
	u, err := url.Parse(scheme + "://" + after[:end])
	if err != nil || u.User == nil {
		return raw, ""
	}
	pw, _ := u.User.Password()
	return scheme + "://" + after[at+1:], u.User.Username() + ":" + pw
}

// reason is why entries were left out, in the singular and the plural.
type reason struct{ one, many string }

// thinkTime is the median gap between the end of a recorded request and
// the start of the next, to the nearest 100 ms.
func thinkTime(kept []*entry) (time.Duration, string) {
	var gaps []time.Duration
	for i := 1; i < len(kept); i++ {
		prev, cur := kept[i-1], kept[i]
		if prev.start.IsZero() || cur.start.IsZero() {
			continue
		}
		end := prev.start.Add(time.Duration(prev.Time * float64(time.Millisecond)))
		gaps = append(gaps, max(cur.start.Sub(end), 0))
	}
	if len(gaps) == 0 {
		return time.Second, "between a user's iterations (the recording has no gaps to go by)"
	}
	slices.Sort(gaps)
	median := gaps[len(gaps)/2]
	if len(gaps)%2 == 0 {
		median = (gaps[len(gaps)/2-1] + gaps[len(gaps)/2]) / 2
	}
	median = min(median.Round(100*time.Millisecond), 30*time.Second)
	return median, fmt.Sprintf("between a user's iterations: the median gap between the recorded requests (%d gaps)", len(gaps))
}

// responseBody decodes an entry's recorded response body ("" when the
// recording has none).
func responseBody(e *entry) string {
	c := e.Response.Content
	if c.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(c.Text)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return c.Text
}

// dropped are the request headers a browser sends by itself, or that
// describe the connection or a cache: a plan does not send them.
var droppedHeaders = []string{"host", "connection", "content-length", "accept-encoding", "accept-language",
	"user-agent", "referer", "upgrade-insecure-requests", "cache-control", "pragma", "if-none-match",
	"if-modified-since", "priority", "dnt", "te", "keep-alive", "proxy-connection", "cookie", "content-type",
	"alt-used"} // Firefox's: the host it used, which the plan's target may no longer be

// harRequest builds the plan's request of an entry; earlier holds what
// the answers before it handed out, which it may use.
func (s *sketch) harRequest(e *entry, earlier *handed) (*request, error) {
	r := &request{method: strings.ToUpper(e.Request.Method)}
	s.consume = earlier.consume
	defer func() { s.consume = nil }()
	r.url = s.harURL(e.rest, earlier)
	contentType, cookies := s.harHeaders(e, r, earlier)
	if c := s.cookies(e, cookies, earlier); c != nil {
		r.headers = append(r.headers, *c)
	}
	if e.user != "" && !hasHeaderNamed(r.headers, "Authorization") {
		env := s.env.ref("basic auth", "user:password in base64 (`printf %s user:password | base64`), for the Authorization header: the recorded URL's user information", e.user)
		r.headers = append(r.headers, header{name: "Authorization", value: "Basic " + envTemplate(env), comment: "the recorded URL's user information"})
	}
	if pd := e.Request.PostData; pd != nil {
		if contentType == "" {
			contentType = pd.MimeType
		}
		contentType = s.bodyFor(r, postText(pd), contentType, "the body of "+r.method+" "+shownPath(r.url))
	}
	if contentType != "" {
		r.headers = append(r.headers, header{name: "Content-Type", value: lit(contentType)})
	}
	if st := e.Response.Status; st >= 300 && st < 400 && st != 304 {
		r.status = []int{st}
		r.comment = fmt.Sprintf("answered %d in the recording: redirects are not followed, so %d is expected", st, st)
	}
	return r, nil
}

// harURL is the plan's URL of a recorded one (rest: its path and query):
// path segments and query values handed out earlier are extracted; secret
// query values come from the environment.
func (s *sketch) harURL(rest string, earlier *handed) string {
	p, q, hasQuery := strings.Cut(cleanURL(rest), "?")
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if v, ok := earlier.consume(seg, true); ok {
			segs[i] = v
		} else {
			segs[i] = s.pathSegment(seg)
		}
	}
	u := strings.Join(segs, "/")
	if hasQuery {
		parts := strings.Split(q, "&")
		for i, part := range parts {
			parts[i] = s.formField(part, "query parameter", true)
		}
		u += "?" + strings.Join(parts, "&")
	}
	return u
}

// harHeaders adds to r the recorded request headers a plan sends, and
// returns apart its Content-Type and Cookie headers. A plan leaves out
// pseudo-headers and those a browser sends by itself, says a navigation
// accepts any page, and sends the target as the Origin the recorded
// origin was.
func (s *sketch) harHeaders(e *entry, r *request, earlier *handed) (contentType string, cookies []string) {
	for _, h := range e.Request.Headers {
		name := h.Name
		lower := strings.ToLower(name)
		switch {
		case strings.HasPrefix(name, ":"), strings.HasPrefix(lower, "sec-"):
		case !headerName.MatchString(name) || strings.ContainsAny(h.Value, "\r\n\x00"):
			// not something a request can carry
		case lower == "content-type":
			contentType = h.Value
		case lower == "cookie":
			cookies = append(cookies, h.Value)
		case slices.Contains(droppedHeaders, lower):
		case hasHeaderNamed(r.headers, name):
			// HTTP/2 recordings may repeat a header
		case lower == "accept" && strings.Contains(h.Value, "text/html"):
			// a browser's navigation: any page will do
		case lower == "origin" && h.Value == e.base:
			r.headers = append(r.headers, header{name: name, value: lit(s.target)})
		default:
			r.headers = append(r.headers, s.harHeader(name, h.Value, earlier))
		}
	}
	return contentType, cookies
}

// harHeader is the plan's header of a recorded one: a value handed out
// by an earlier answer is extracted from it.
func (s *sketch) harHeader(name, value string, earlier *handed) header {
	if v, ok := earlier.consume(value, false); ok {
		return header{name: name, value: v, comment: "handed out by an earlier answer"}
	}
	v, comment := s.headerValue(name, value)
	return header{name: name, value: v, comment: comment}
}

// postText is a recorded request's body: its text, or its form
// parameters URL-encoded.
func postText(pd *harPostData) string {
	if pd.Text != "" || len(pd.Params) == 0 {
		return pd.Text
	}
	vals := make([]string, len(pd.Params))
	for i, p := range pd.Params {
		vals[i] = url.QueryEscape(p.Name) + "=" + url.QueryEscape(p.Value)
	}
	return strings.Join(vals, "&")
}

// hasHeaderNamed reports whether hs holds a header of that name.
func hasHeaderNamed(hs []header, name string) bool {
	return slices.ContainsFunc(hs, func(h header) bool { return strings.EqualFold(h.name, name) })
}

// cookies returns the request's Cookie header, without the cookies an
// earlier answer set (each virtual user's cookie jar sends those) and
// with the others read from the environment; nil when none is left.
func (s *sketch) cookies(e *entry, headers []string, earlier *handed) *header {
	var rest, pairs []string
	for _, h := range headers {
		for _, c := range strings.Split(h, ";") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			name, value, _ := strings.Cut(c, "=")
			if at, ok := earlier.cookies[name+"="+value]; ok {
				at.e.used[at.of.ex.name] = true
				continue
			}
			rest, pairs = append(rest, name), append(pairs, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	value := strings.Join(pairs, "; ")
	env := s.env.ref("Cookie", fmt.Sprintf("the Cookie header your browser sends (the recording's had %s, set before it began)", strings.Join(rest, ", ")), value)
	return &header{name: "Cookie", value: envTemplate(env), comment: "cookies the recording did not see being set"}
}

// handed indexes the values the answers so far handed out: the latest
// answer that handed out each.
type handed struct {
	values  map[string]offerAt
	cookies map[string]offerAt // by "name=value"
}

type offerAt struct {
	of offer
	e  *entry
}

func newHanded() *handed {
	return &handed{values: map[string]offerAt{}, cookies: map[string]offerAt{}}
}

// add indexes what an entry's answer handed out.
func (h *handed) add(e *entry) {
	for _, of := range e.offers {
		h.values[of.value] = offerAt{of, e}
		if of.ex.kind == "cookie" {
			h.cookies[of.ex.source+"="+of.value] = offerAt{of, e}
		}
	}
}

// words splits a header's value where a token cannot go on: "Bearer
// abc" and "a=1; b=2" give the parts that may each be one.
var words = regexp.MustCompile(`[^\s,;"']+`)

// consume returns raw as a template that reads the values earlier
// answers handed out instead of repeating them, and whether it does:
// whole, raw must be such a value; else its words may be (a header's
// "Bearer " and a token, "token=" and a token).
func (h *handed) consume(raw string, whole bool) (string, bool) {
	if len(raw) < minOffer {
		return "", false
	}
	use := func(v string) (string, bool) {
		at, ok := h.values[v]
		if !ok {
			return "", false
		}
		at.e.used[at.of.ex.name] = true
		return "{{." + at.of.ex.name + "}}", true
	}
	if whole {
		return use(raw)
	}
	var b strings.Builder
	found, last := false, 0
	for _, loc := range words.FindAllStringIndex(raw, -1) {
		w := raw[loc[0]:loc[1]]
		start := loc[0]
		t, ok := use(w)
		if !ok {
			if _, after, cut := strings.Cut(w, "="); cut {
				start = loc[1] - len(after)
				t, ok = use(after)
			}
		}
		if !ok {
			continue
		}
		b.WriteString(lit(raw[last:start]))
		b.WriteString(t)
		last, found = loc[1], true
	}
	b.WriteString(lit(raw[last:]))
	return b.String(), found
}

// maxOffers bounds the values taken from one answer.
const maxOffers = 100

// minOffer is the shortest value taken for one an answer handed out:
// shorter ones (ids such as 7) match by chance.
const minOffer = 8

// tokenLike reports whether an answer's value looks handed out to be used
// again: long enough, one word, with a digit or long.
func tokenLike(v string) bool {
	if len(v) < minOffer || len(v) > 4096 || strings.ContainsAny(v, " \t\r\n\"'<>") {
		return false
	}
	return len(v) >= 16 || strings.ContainsAny(v, "0123456789")
}

// offers lists the values an entry's answer hands out, each with the
// extraction that finds it again, checked against the recorded answer.
func offers(e *entry) []offer {
	var out []offer
	names := map[string]bool{}
	add := func(value string, ex extraction) {
		if len(out) >= maxOffers || !verify(e, ex, value) {
			return
		}
		base := identifier(ex.name)
		ex.name = base
		for n := 2; names[ex.name]; n++ {
			ex.name = fmt.Sprintf("%s_%d", base, n)
		}
		names[ex.name] = true
		out = append(out, offer{value: value, ex: ex})
	}
	for _, c := range setCookies(e) {
		if c.Value != "" {
			add(c.Value, extraction{name: c.Name, kind: "cookie", source: c.Name})
		}
	}
	for _, h := range e.Response.Headers {
		l := strings.ToLower(h.Name)
		if l != "set-cookie" && (strings.Contains(l, "csrf") || strings.Contains(l, "xsrf") || strings.Contains(l, "token")) && tokenLike(h.Value) {
			add(h.Value, extraction{name: h.Name, kind: "header", source: h.Name})
		}
	}
	if strings.Contains(strings.ToLower(e.Response.Content.MimeType), "json") {
		if v, err := parseJSON([]byte(e.body)); err == nil {
			jsonOffers(v, "", "", add)
		}
	}
	if strings.Contains(strings.ToLower(e.Response.Content.MimeType), "html") {
		htmlOffers(e.body, add)
	}
	return out
}

// setCookies are the cookies an answer sets.
func setCookies(e *entry) []harNV {
	if len(e.Response.Cookies) > 0 {
		return e.Response.Cookies
	}
	var out []harNV
	for _, h := range e.Response.Headers {
		if !strings.EqualFold(h.Name, "Set-Cookie") {
			continue
		}
		for _, line := range strings.Split(h.Value, "\n") { // Firefox joins several with newlines
			first, _, _ := strings.Cut(line, ";")
			name, value, ok := strings.Cut(strings.TrimSpace(first), "=")
			if ok && name != "" {
				out = append(out, harNV{Name: name, Value: value})
			}
		}
	}
	return out
}

// jsonOffers walks a JSON answer for token-like strings, with their gjson
// paths.
func jsonOffers(v *jvalue, path, key string, add func(string, extraction)) {
	switch v.kind {
	case jstring:
		if tokenLike(v.text) {
			add(v.text, extraction{name: cmp(key, "value"), kind: "json", source: path})
		}
	case jobject:
		for i, k := range v.keys {
			if k != "" { // a gjson path cannot name an empty key
				jsonOffers(v.items[i], join(path, gjsonKey(k)), k, add)
			}
		}
	case jarray:
		for i, item := range v.items {
			if i >= 20 {
				break // a long list: its first items are enough
			}
			jsonOffers(item, join(path, strconv.Itoa(i)), key, add)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// gjsonKey escapes a key for a gjson path.
func gjsonKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?|#@\!=<>%"`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var (
	htmlTag  = regexp.MustCompile(`(?is)<(?:input|meta)\b[^>]*>`)
	htmlAttr = regexp.MustCompile(`(?s)([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)')`)
)

// htmlOffers finds the values of hidden inputs and meta tags (a CSRF
// token) in a page, each with a regular expression that finds it again.
func htmlOffers(body string, add func(string, extraction)) {
	for _, loc := range htmlTag.FindAllStringIndex(body, 200) {
		tag := body[loc[0]:loc[1]]
		attrs := htmlAttr.FindAllStringSubmatchIndex(tag, -1)
		name, hidden, meta := "", false, strings.HasPrefix(strings.ToLower(tag), "<meta")
		for _, a := range attrs {
			k, v := strings.ToLower(tag[a[2]:a[3]]), attrValue(tag, a)
			switch {
			case k == "name":
				name = v
			case k == "type" && strings.EqualFold(v, "hidden"):
				hidden = true
			}
		}
		for _, a := range attrs {
			k, v := strings.ToLower(tag[a[2]:a[3]]), attrValue(tag, a)
			if !(k == "value" && hidden || k == "content" && meta) || name == "" || !tokenLike(v) {
				continue
			}
			start, quote := a[4], `"`
			if start < 0 {
				start, quote = a[6], `'`
			}
			// From the tag's start, or from its name attribute, to the value.
			prefix := tag[:start]
			if i := strings.Index(strings.ToLower(prefix), "name="); i > 0 {
				prefix = prefix[i:]
			}
			add(v, extraction{name: name, kind: "regex", source: regexp.QuoteMeta(prefix) + "([^" + quote + "]+)"})
		}
	}
}

func attrValue(tag string, a []int) string {
	if a[4] >= 0 {
		return tag[a[4]:a[5]]
	}
	return tag[a[6]:a[7]]
}

// verify checks that an extraction finds value in the recorded answer.
func verify(e *entry, ex extraction, value string) bool {
	switch ex.kind {
	case "cookie":
		return true
	case "header":
		for _, h := range e.Response.Headers {
			if strings.EqualFold(h.Name, ex.source) {
				return h.Value == value
			}
		}
		return false
	case "json":
		r := gjson.Get(e.body, ex.source)
		return r.Type == gjson.String && r.String() == value
	case "regex":
		re, err := regexp.Compile(ex.source)
		if err != nil {
			return false
		}
		m := re.FindStringSubmatch(e.body)
		return len(m) > 1 && m[1] == value
	}
	return false
}

// identifier makes a name usable as an extracted name: letters, digits
// and _, not starting with a digit, and not one ceiling sets itself.
func identifier(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	switch {
	case out == "user", out == "vu", out == "iteration":
		return "value_" + out
	case out == "" || out[0] >= '0' && out[0] <= '9':
		return strings.TrimSuffix("value_"+out, "_")
	}
	return out
}

// flow makes the kept requests one flow, in recorded order.
func (s *sketch) flow(kept []*entry) {
	sc := &scenario{name: "recorded session", flow: true}
	if n := len(kept); n > maxScenarios {
		kept = kept[:maxScenarios]
		s.note("Left out the last %d of the recording's %d requests: the flow keeps its first %d (a plan file is at most %d MiB).", n-maxScenarios, n, maxScenarios, maxPlanBytes>>20)
	}
	for _, e := range kept {
		e.req.name = e.req.method + " " + endpointOf(e.req.url)
		sc.steps = append(sc.steps, e.req)
	}
	taken := map[string]bool{}
	for _, r := range sc.steps {
		name := r.name
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s (%d)", r.name, n)
		}
		r.name, taken[name] = name, true
	}
	s.scenarios = []*scenario{sc}
}

// mix makes the requests whose answers later ones use the plan's login,
// in recorded order, and the others a weighted mix of their endpoints:
// requests of one method to one path, ids aside, are one scenario whose
// weight is how often they were sent.
func (s *sketch) mix(kept []*entry) {
	// One request per endpoint logs in: a value handed out again and
	// again (a token renewed by every page) is extracted once, by the
	// first, and the others are part of the mix.
	inLogin := map[string]bool{}
	for _, e := range kept {
		if len(e.req.extract) == 0 {
			continue
		}
		key := e.req.method + " " + endpointOf(e.req.url)
		if inLogin[key] {
			e.req.extract = nil
			continue
		}
		inLogin[key], e.login = true, true
		s.login = append(s.login, e.req)
	}
	type group struct {
		sc      *scenario
		urls    []string
		entries []*entry
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range kept {
		if e.login {
			continue
		}
		key := e.req.method + " " + endpointOf(e.req.url)
		g := byKey[key]
		if g == nil {
			g = &group{sc: &scenario{name: key, steps: []*request{e.req}}}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.entries = append(g.entries, e)
		if !slices.Contains(g.urls, e.req.url) {
			g.urls = append(g.urls, e.req.url)
		}
	}
	for _, g := range groups {
		g.sc.weight = len(g.entries)
		g.sc.comment = fmt.Sprintf("sent %d time%s in the recording", len(g.entries), plural(len(g.entries)))
		if len(g.urls) > 1 {
			g.sc.steps[0].url = pickURL(g.urls)
			g.sc.comment += fmt.Sprintf(", to %d URLs", len(g.urls))
		}
		s.scenarios = append(s.scenarios, g.sc)
	}
	if len(s.scenarios) == 0 {
		// Every request handed something out: the last one is the mix.
		last := s.login[len(s.login)-1]
		s.login = s.login[:len(s.login)-1]
		s.scenarios = []*scenario{{name: last.method + " " + last.url, steps: []*request{last}}}
	}
	s.capScenarios("endpoints", "the most frequent")
	uniqueNames(s.scenarios)
}

// pickURL draws an endpoint's URL per iteration from those recorded:
// where they differ by a path segment (an id) or by their query, that
// part is picked from the recorded values. URLs that are templates
// themselves are kept to the first.
func pickURL(urls []string) string {
	type parts struct {
		segs  []string
		query string
	}
	var ps []parts
	for _, u := range urls {
		if strings.Contains(u, "{{") {
			return urls[0]
		}
		p, q, _ := strings.Cut(u, "?")
		ps = append(ps, parts{strings.Split(p, "/"), q})
	}
	pick := func(values []string) string {
		var distinct []string
		for _, v := range values {
			if !slices.Contains(distinct, v) && len(distinct) < 20 {
				distinct = append(distinct, v)
			}
		}
		if len(distinct) == 1 {
			return distinct[0]
		}
		quoted := make([]string, len(distinct))
		for i, v := range distinct {
			quoted[i] = strconv.Quote(v)
		}
		return "{{pick " + strings.Join(quoted, " ") + "}}"
	}
	for _, p := range ps[1:] {
		if len(p.segs) != len(ps[0].segs) {
			// Paths of different shapes: the whole path is picked, after
			// a "/" that keeps it relative to the target.
			trimmed := make([]string, len(urls))
			for i, u := range urls {
				trimmed[i] = strings.TrimPrefix(u, "/")
			}
			return "/" + pick(trimmed)
		}
	}
	segs := make([]string, len(ps[0].segs))
	for i := range segs {
		values := make([]string, len(ps))
		for j, p := range ps {
			values[j] = p.segs[i]
		}
		segs[i] = pick(values)
	}
	out := strings.Join(segs, "/")
	queries := make([]string, len(ps))
	for i, p := range ps {
		queries[i] = p.query
	}
	if q := pick(queries); q != "" {
		out += "?" + q
	}
	return out
}

var (
	uuidSeg = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hexSeg  = regexp.MustCompile(`^[0-9a-fA-F]{12,}$`)
	numSeg  = regexp.MustCompile(`^[0-9]+$`)
)

// templateRef is a template action in a drafted URL: {{.name}} (a value
// handed out) or another.
var templateRef = regexp.MustCompile(`\{\{(?:\.([A-Za-z_][A-Za-z0-9_]*))?[^}]*\}\}`)

// endpointOf names a drafted URL's endpoint: its path, with what is read
// from an earlier answer as {name} and ids as {id}.
func endpointOf(u string) string {
	return endpoint(shownPath(u))
}

// shownPath is a drafted URL's path as messages and names show it: what
// is read from an earlier answer as {name}, other templates (a secret
// from the environment) as {value}.
func shownPath(u string) string {
	p, _, _ := strings.Cut(u, "?")
	return templateRef.ReplaceAllStringFunc(p, func(m string) string {
		if name := templateRef.FindStringSubmatch(m)[1]; name != "" {
			return "{" + name + "}"
		}
		return "{value}"
	})
}

// endpoint names a path with its ids replaced: /api/instances/7/status is
// /api/instances/{id}/status.
func endpoint(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if numSeg.MatchString(seg) || uuidSeg.MatchString(seg) || hexSeg.MatchString(seg) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}
