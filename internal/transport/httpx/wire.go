package httpx

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Limits on what a response may send before it is a Protocol failure.
const (
	// maxHeaderBytes caps the status line and headers of one response.
	maxHeaderBytes = 64 << 10
	// maxLineBytes caps one status, header, chunk-size or trailer line.
	maxLineBytes = 16 << 10
	// readBufferSize is each connection's read buffer: the size of the
	// reads a body arrives in, and what a user of the goroutine engine
	// holds for its connection. A line longer than it (up to maxLineBytes)
	// is gathered apart (readLine).
	readBufferSize = 4 << 10
)

// errMalformed is any response that is not HTTP/1.x as RFC 9112 writes it.
var errMalformed = errors.New("malformed response")

// errBodyTooLarge is a body past the configured cap.
var errBodyTooLarge = errors.New("response body too large")

// encodeRequest writes r in HTTP/1.1 wire form to dst. u is r.URL parsed.
func encodeRequest(dst []byte, r *requestLine, header [][2]string, body []byte) []byte {
	dst = append(dst, r.method...)
	dst = append(dst, ' ')
	dst = append(dst, r.target...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	hasHost, hasUA, hasAuth := false, false, false
	for _, h := range header {
		switch {
		case strings.EqualFold(h[0], "Host"):
			hasHost = true
		case strings.EqualFold(h[0], "User-Agent"):
			hasUA = true
		case strings.EqualFold(h[0], "Authorization"):
			hasAuth = true
		case strings.EqualFold(h[0], "Content-Length"):
			continue // computed from the body
		}
		dst = append(dst, h[0]...)
		dst = append(dst, ": "...)
		dst = append(dst, h[1]...)
		dst = append(dst, "\r\n"...)
	}
	if !hasHost {
		dst = append(dst, "Host: "...)
		dst = append(dst, r.host...)
		dst = append(dst, "\r\n"...)
	}
	if !hasUA {
		dst = append(dst, "User-Agent: ceiling\r\n"...)
	}
	if !hasAuth && r.auth != "" {
		dst = append(dst, "Authorization: "...)
		dst = append(dst, r.auth...)
		dst = append(dst, "\r\n"...)
	}
	if body != nil || r.method == "POST" || r.method == "PUT" || r.method == "PATCH" {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// requestLine is the parsed form of a request URL.
type requestLine struct {
	method string
	target string // origin-form: path?query
	host   string // Host header value
	addr   string // host:port to dial
	tls    bool
	// auth is the Authorization value ("Basic ...") of the URL's user
	// information (http://user:pass@host/), sent unless the request has its
	// own; "" when the URL has none.
	auth string
}

func parseRequestLine(method, raw string) (requestLine, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return requestLine{}, err
	}
	rl := requestLine{method: method, host: u.Host, target: u.EscapedPath()}
	if u.User != nil {
		pass, _ := u.User.Password()
		rl.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	switch u.Scheme {
	case "http":
	case "https":
		rl.tls = true
	default:
		return requestLine{}, errors.New("unsupported scheme " + strconv.Quote(u.Scheme))
	}
	if u.Host == "" {
		return requestLine{}, errors.New("URL has no host")
	}
	if rl.target == "" {
		rl.target = "/"
	}
	if u.RawQuery != "" {
		rl.target += "?" + u.RawQuery
	}
	rl.addr = u.Host
	if u.Port() == "" {
		port := "80"
		if rl.tls {
			port = "443"
		}
		rl.addr = u.Hostname() + ":" + port
		if strings.Contains(u.Hostname(), ":") {
			rl.addr = "[" + u.Hostname() + "]:" + port
		}
	}
	return rl, nil
}

// splitPlainURL splits raw into its authority (the Host header's value)
// and its request target without allocating, when raw is a plain http URL
// of the common form: "http://" host [":" port] ["/" path] ["?" query], the
// host of letters, digits, '-' and '.', a port of one digit or more, a path
// with nothing to escape (letters, digits, "-._~/"), a query of printable
// ASCII but '#' and space, no user information, no fragment. For such a
// URL parseRequestLine (url.Parse) makes the same host and target; ok is
// false for any other URL, which parseRequestLine then reads.
func splitPlainURL(raw string) (authority, target string, ok bool) {
	const scheme = "http://"
	if len(raw) <= len(scheme) || raw[:len(scheme)] != scheme {
		return "", "", false
	}
	rest := raw[len(scheme):]
	i := 0
	for i < len(rest) && hostByte(rest[i]) {
		i++
	}
	if i == 0 {
		return "", "", false // no host, or one of other bytes
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == i+1 {
			return "", "", false // "host:" with no port
		}
		i = j
	}
	authority, rest = rest[:i], rest[i:]
	if rest == "" {
		return authority, "/", true
	}
	if rest[0] != '/' {
		return "", "", false // user information, a query with no path, other bytes
	}
	j := 0
	for j < len(rest) && pathByte(rest[j]) {
		j++
	}
	if j == len(rest) {
		return authority, rest, true
	}
	if rest[j] != '?' {
		return "", "", false
	}
	for k := j + 1; k < len(rest); k++ {
		if b := rest[k]; b <= ' ' || b >= 0x7f || b == '#' {
			return "", "", false
		}
	}
	if j+1 == len(rest) {
		return authority, rest[:j], true // url.Parse drops a lone '?' at the end
	}
	return authority, rest, true
}

// hostByte reports whether b may be in a host splitPlainURL takes.
func hostByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '.'
}

// pathByte reports whether b may be in a path splitPlainURL takes: an
// unreserved byte or '/', which url.Parse keeps as it is.
func pathByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '-' || b == '.' || b == '_' || b == '~' || b == '/'
}

// plainAddr is the address to dial for the authority of an http URL that
// splitPlainURL split: as it is when it names a port, else port 80.
func plainAddr(authority string) string {
	if strings.IndexByte(authority, ':') >= 0 {
		return authority
	}
	return authority + ":80"
}

// response is what readResponse learned.
type response struct {
	status  int
	body    int64 // body bytes read
	close   bool  // the connection cannot be reused
	started bool  // at least one byte of the response arrived
}

// capture is where a response's header lines and (when keepBody is set) its
// body go. Its buffers are reused from one response to the next.
type capture struct {
	header   []byte
	body     []byte
	keepBody bool
	// reserved is what body holds of the process's kept-body budget
	// (kept.go), given back by done.
	reserved int64
}

// done gives back what the exchange kept of the budget, once the caller
// has what it needs of the body.
func (c *capture) done() { c.body = release(c.body, &c.reserved) }

// Body framings a head can announce, besides a length >= 0.
const (
	untilClose = -1 // no length: the body ends with the connection
	chunked    = -2 // Transfer-Encoding: chunked
)

// readResponse reads one whole response from br, skipping 1xx interim
// responses. Its header lines go to c.header; its body, up to maxBody bytes,
// goes to c.body when c.keepBody is set and is discarded otherwise, counted
// either way. isHead says the request was a HEAD, whose response has no body.
func readResponse(br *bufio.Reader, isHead bool, maxBody int64, c *capture) (response, error) {
	for interim := false; ; interim = true {
		c.header, c.body = c.header[:0], c.body[:0]
		resp, framing, err := readHead(br, c)
		resp.started = resp.started || interim // a 1xx already answered
		if err != nil {
			return resp, err
		}
		switch {
		case resp.status == 101:
			return resp, errMalformed // we never ask to switch protocols
		case resp.status < 200:
			continue
		}
		return resp, readBody(br, &resp, framing, isHead, maxBody, c)
	}
}

// head holds what the header fields say about framing.
type head struct {
	length  int64 // -1: none given
	chunked bool
}

// readHead reads the status line and header fields and returns the body's
// framing: a length, untilClose or chunked. Chunked wins over a length
// (RFC 9112 section 6.3).
func readHead(br *bufio.Reader, c *capture) (response, int64, error) {
	var resp response
	line, err := readLine(br)
	if len(line) > 0 {
		resp.started = true
	}
	if err != nil {
		return resp, 0, lineErr(err)
	}
	total := len(line)
	http10, err := resp.statusLine(line)
	if err != nil {
		return resp, 0, err
	}
	h := head{length: -1}
	for {
		line, err := readLine(br)
		if err != nil {
			return resp, 0, lineErr(err)
		}
		if total += len(line); total > maxHeaderBytes {
			return resp, 0, errMalformed
		}
		line = trimEOL(line)
		if len(line) == 0 {
			break
		}
		if err := h.field(line, &resp, http10); err != nil {
			return resp, 0, err
		}
		c.header = append(append(c.header, line...), "\r\n"...)
	}
	return resp, h.framing(), nil
}

// statusLine reads a status line ("HTTP/1.1 200 OK": version, space, three
// digits, then a space or the end) into resp, and says whether it is
// HTTP/1.0, which closes the connection unless asked not to.
func (resp *response) statusLine(line []byte) (http10 bool, err error) {
	line = trimEOL(line)
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return false, errMalformed
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return false, errMalformed
		}
		resp.status = resp.status*10 + int(c-'0')
	}
	if resp.status < 100 {
		return false, errMalformed
	}
	http10 = line[7] == '0'
	resp.close = http10
	return http10, nil
}

// framing is the body's framing the fields announced: a length, untilClose
// or chunked. Chunked wins over a length (RFC 9112 section 6.3).
func (h *head) framing() int64 {
	switch {
	case h.chunked:
		return chunked
	case h.length >= 0:
		return h.length
	}
	return untilClose
}

// noBody reports whether a response has no body whatever its fields say.
func noBody(isHead bool, status int) bool { return isHead || status == 204 || status == 304 }

// field reads one header field.
func (h *head) field(line []byte, resp *response, http10 bool) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
		return errMalformed // no name, or obsolete line folding
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 || (h.length >= 0 && h.length != n) {
			return errMalformed
		}
		h.length = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		last := value
		if i := bytes.LastIndexByte(value, ','); i >= 0 {
			last = bytes.TrimSpace(value[i+1:])
		}
		if !bytes.EqualFold(last, []byte("chunked")) {
			return errMalformed // only chunked framing is defined for responses we read
		}
		h.chunked = true
	case bytes.EqualFold(name, []byte("Connection")):
		switch {
		case containsToken(value, "close"):
			resp.close = true
		case http10 && containsToken(value, "keep-alive"):
			resp.close = false
		}
	}
	return nil
}

// readBody reads the body that framing announces, into c.body when
// c.keepBody is set, and sets resp.body to the bytes read.
func readBody(br *bufio.Reader, resp *response, framing int64, isHead bool, maxBody int64, c *capture) error {
	if noBody(isHead, resp.status) {
		return nil
	}
	switch {
	case framing == chunked:
		return readChunked(br, resp, maxBody, c)
	case framing >= 0:
		if framing > maxBody {
			resp.close = true
			return errBodyTooLarge
		}
		return bodyErr(take(br, resp, framing, c))
	}
	resp.close = true // the body runs to the end of the connection
	for {
		if resp.body > maxBody {
			return errBodyTooLarge
		}
		err := take(br, resp, min(maxBody+1-resp.body, readBufferSize), c)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// take reads n body bytes from br (fewer at the end of the stream), keeping
// them in c.body or discarding them, and counts them into resp.body. The
// kept body grows as bytes arrive, never to a size only announced.
func take(br *bufio.Reader, resp *response, n int64, c *capture) error {
	for n > 0 {
		step := min(n, readBufferSize)
		var got int
		var err error
		if c.keepBody {
			if !kept.take(step) {
				resp.close = true
				return errKeptBudget
			}
			c.reserved += step
			start := len(c.body)
			c.body = slices.Grow(c.body, int(step))[:start+int(step)]
			got, err = io.ReadFull(br, c.body[start:])
			c.body = c.body[:start+got]
		} else {
			got, err = br.Discard(int(step))
		}
		resp.body += int64(got)
		n -= int64(got)
		if err != nil {
			return err
		}
	}
	return nil
}

func readChunked(br *bufio.Reader, resp *response, maxBody int64, c *capture) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return bodyErr(lineErr(err))
		}
		line = trimEOL(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return errMalformed
		}
		if size == 0 {
			return readTrailers(br)
		}
		if size > maxBody-resp.body {
			resp.close = true
			return errBodyTooLarge
		}
		if err := take(br, resp, size, c); err != nil {
			return bodyErr(err)
		}
		crlf, err := readLine(br)
		if err != nil {
			return bodyErr(lineErr(err))
		}
		if len(trimEOL(crlf)) != 0 {
			return errMalformed
		}
	}
}

func readTrailers(br *bufio.Reader) error {
	for total := 0; ; {
		line, err := readLine(br)
		if err != nil {
			return bodyErr(lineErr(err))
		}
		if total += len(line); total > maxHeaderBytes {
			return errMalformed
		}
		if len(trimEOL(line)) == 0 {
			return nil
		}
	}
}

// readLine returns br's next line, through its '\n'. A line that fits
// br's buffer is br's own bytes (valid until the next read, no copy); a
// longer one is gathered into a slice of its own, and one longer than
// maxLineBytes is malformed.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := slices.Clone(line)
	for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxLineBytes {
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	if len(long) > maxLineBytes {
		return long, errMalformed
	}
	return long, err
}

// lineErr maps a line that does not fit the buffer to a malformed response.
func lineErr(err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return errMalformed
	}
	return err
}

// bodyErr maps a body cut short to an unexpected EOF (a reset connection).
func bodyErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// containsToken reports whether the comma-separated list v holds tok.
func containsToken(v []byte, tok string) bool {
	for len(v) > 0 {
		part := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if bytes.EqualFold(bytes.TrimSpace(part), []byte(tok)) {
			return true
		}
	}
	return false
}
