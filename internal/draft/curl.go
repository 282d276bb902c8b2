package draft

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ceiling-dev/ceiling/internal/inputfile"
)

// Source is text that holds curl commands: one --curl argument, or a file
// of them (one per line, continued with a backslash, # comments allowed).
type Source struct {
	// Name says where the text comes from in messages: a file's path, or
	// "--curl 2" for the second argument.
	Name string
	// Text is the shell text.
	Text string
	// Dir is where a command's @file paths are relative to; empty: the
	// working directory.
	Dir string
}

// maxCurlBytes bounds a file of curl commands, and a body read by one
// (-d @file).
const maxCurlBytes = 8 << 20

// curlCmd is one curl command, its options read.
type curlCmd struct {
	at       string // "name:line:col" of the command
	method   string
	url      string // may hold environment sentinels
	headers  [][2]string
	data     []string
	hasData  bool
	get      bool // -G: the data goes in the query
	head     bool
	json     bool // --json
	upload   string
	user     string // -u user:password
	cookie   string // -b name=value
	insecure bool
	location bool
	http2    bool
	maxTime  time.Duration
	files    []string // the files it read (@file, -T), as it named them
}

// FromCurl drafts a plan from curl commands, one scenario per command.
func FromCurl(ctx context.Context, srcs []Source, o Options) (*Draft, error) {
	var cmds []*curlCmd
	for _, src := range srcs {
		cs, err := parseCurls(ctx, src)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, cs...)
	}
	if len(cmds) == 0 {
		return nil, errors.New("no curl command found")
	}
	s := newSketch(o)
	var base string
	for i, c := range cmds {
		r, host, err := s.curlRequest(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.at, err)
		}
		if i == 0 {
			base = host
			s.target = cmp(o.Target, host)
			s.name = hostName(host)
		}
		if host != base {
			r.url = lit(host) + r.url // another host than the target's: absolute
		}
		s.scenarios = append(s.scenarios, &scenario{name: r.method + " " + shownPath(r.url), steps: []*request{r}})
		s.http.insecure = s.http.insecure || c.insecure
		s.http.followRedirects = s.http.followRedirects || c.location
		s.http.http2 = s.http.http2 || c.http2
		s.http.timeout = max(s.http.timeout, c.maxTime)
	}
	s.capScenarios("curl commands", "the first")
	uniqueNames(s.scenarios)
	var files []string
	for _, c := range cmds {
		for _, f := range c.files {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	if len(files) > 0 {
		s.note("Read %d file%s for request bodies (what they hold is in the plan, and is sent to the target): %s.", len(files), plural(len(files)), strings.Join(files, ", "))
	}
	what := fmt.Sprintf("%d curl command%s", len(cmds), plural(len(cmds)))
	s.header = []string{fmt.Sprintf("A plan drafted by ceiling init from %s: one scenario each, as an open-model mix of equal weights.", what), s.readIt()}
	return s.draft(), nil
}

// cmp returns a if it is set, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hostName is a plan's name from its target: the host, without port.
func hostName(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "drafted plan"
	}
	return u.Hostname()
}

// splitURL splits an absolute http(s) URL into its origin and the rest,
// without decoding anything: references to environment variables may be
// in either (those in the origin are read now: a target is no template).
func splitURL(raw string) (base, rest string, err error) {
	scheme, after, ok := strings.Cut(raw, "://")
	if !ok {
		// curl takes a URL without a scheme as http://.
		scheme, after = "http", raw
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return "", "", fmt.Errorf("want an http:// or https:// URL, not %q", raw)
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	host, rest := after[:end], after[end:]
	rest, _, _ = strings.Cut(rest, "#")
	if hasEnv(host) {
		var unset []string
		if host, unset = withEnv(host); len(unset) > 0 {
			return "", "", fmt.Errorf("the URL's host reads $%s, which is not set: a plan's target is written out, so set it before ceiling init", unset[0])
		}
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		return "", "", errors.New("a URL with user information: give it with -u user:password, which the plan reads from the environment")
	}
	u, err := url.Parse(scheme + "://" + host)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("the URL %q has no host", raw)
	}
	if rest == "" || rest[0] == '?' {
		rest = "/" + rest
	}
	return scheme + "://" + u.Host, rest, nil
}

// curlRequest turns a curl command into the plan's request, its URL
// relative to host, the URL's origin.
func (s *sketch) curlRequest(c *curlCmd) (r *request, host string, err error) {
	data := c.dataInQuery()
	host, rest, err := splitURL(c.url)
	if err != nil {
		return nil, "", err
	}
	s.curlEnv(c, data)
	r = &request{method: c.sentMethod(), url: s.pathQuery(rest)}
	headers, contentType, err := c.sentHeaders()
	if err != nil {
		return nil, "", err
	}
	if c.user != "" {
		auth, err := s.basicAuth(c.user, headers)
		if err != nil {
			return nil, "", err
		}
		r.headers = append(r.headers, auth)
	}
	for _, h := range headers {
		v, comment := s.headerValue(h[0], h[1])
		r.headers = append(r.headers, header{name: h[0], value: v, comment: comment})
	}
	switch {
	case c.hasData:
		if contentType == "" {
			contentType = "application/x-www-form-urlencoded" // as curl sends -d
		}
		contentType = s.bodyFor(r, data, contentType, "the body of "+r.method+" "+shownPath(r.url))
	case c.upload != "":
		contentType = s.bodyFor(r, c.upload, contentType, "the body of "+r.method+" "+shownPath(r.url))
	}
	if contentType != "" {
		h := header{name: "Content-Type", value: lit(contentType)}
		if r.isJSON && strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
			h.comment = "as curl sends -d; if the API wants JSON, make it application/json"
		}
		r.headers = append(r.headers, h)
	}
	return r, host, nil
}

// dataInQuery returns the command's data joined with &, as curl sends
// it; with -G, curl sends it in the URL's query instead, and the command
// is left with no body.
func (c *curlCmd) dataInQuery() string {
	data := strings.Join(c.data, "&")
	if c.get && c.hasData {
		sep := "?"
		if strings.Contains(c.url, "?") {
			sep = "&"
		}
		c.url += sep + data
		c.hasData = false
	}
	return data
}

// curlEnv names in the plan the environment variables the command reads
// itself: in its URL, cookie, body and headers.
func (s *sketch) curlEnv(c *curlCmd, data string) {
	read := []string{c.url, c.cookie, data, c.upload}
	for _, h := range c.headers {
		read = append(read, h[1])
	}
	for _, text := range read {
		for _, m := range sentinel.FindAllStringSubmatch(text, -1) {
			s.env.named(m[1], "as the curl command read it, $"+m[1])
		}
	}
}

// sentMethod is the method curl sends: -X's, or else HEAD with -I, POST
// with a body, PUT with -T, GET.
func (c *curlCmd) sentMethod() string {
	switch {
	case c.method != "":
		return strings.ToUpper(c.method)
	case c.head:
		return "HEAD"
	case c.hasData:
		return "POST"
	case c.upload != "":
		return "PUT"
	}
	return "GET"
}

// sentHeaders returns the headers curl sends, but its Content-Type,
// which it returns apart (empty: none given): the cookies of -b as a
// Cookie header, a header given twice as one with both values, and what
// --json adds.
func (c *curlCmd) sentHeaders() (headers [][2]string, contentType string, err error) {
	if c.cookie != "" {
		c.headers = append(c.headers, [2]string{"Cookie", c.cookie})
	}
	for _, h := range c.headers {
		if strings.ContainsAny(h[1], "\r\n\x00") {
			return nil, "", fmt.Errorf("header %s: a value with a line break or NUL cannot be sent", h[0])
		}
		if strings.EqualFold(h[0], "Content-Type") {
			contentType = h[1]
			continue
		}
		// A header given twice is sent once with both values, as a plan
		// names each header once.
		if i := slices.IndexFunc(headers, func(g [2]string) bool { return strings.EqualFold(g[0], h[0]) }); i >= 0 {
			sep := ", "
			if strings.EqualFold(h[0], "Cookie") {
				sep = "; "
			}
			headers[i][1] += sep + h[1]
			continue
		}
		headers = append(headers, h)
	}
	if c.json {
		if contentType == "" {
			contentType = "application/json"
		}
		if !hasHeader(headers, "Accept") {
			headers = append(headers, [2]string{"Accept", "application/json"})
		}
	}
	return headers, contentType, nil
}

// basicAuth is the Authorization header of -u user:password, which the
// plan reads from the environment; headers are the others sent.
func (s *sketch) basicAuth(user string, headers [][2]string) (header, error) {
	switch {
	case hasHeader(headers, "Authorization"):
		return header{}, errors.New("both -u and an Authorization header: give one")
	case hasEnv(user):
		return header{}, errors.New("-u reads an environment variable: give the header instead, -H \"Authorization: Basic $CREDENTIALS\" (user:password in base64)")
	}
	env := s.env.ref("basic auth", "user:password in base64 (`printf %s user:password | base64`), for the Authorization header", user)
	return header{name: "Authorization", value: "Basic " + envTemplate(env)}, nil
}

// hasHeader reports whether hs holds a header of that name.
func hasHeader(hs [][2]string, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h[0], name) {
			return true
		}
	}
	return false
}

// parseCurls reads the curl commands of a source.
func parseCurls(ctx context.Context, src Source) ([]*curlCmd, error) {
	text := strings.ReplaceAll(src.Text, "\r\n", "\n")
	f, err := syntax.NewParser().Parse(strings.NewReader(text), src.Name)
	if err != nil {
		return nil, err
	}
	var cmds []*curlCmd
	for _, st := range f.Stmts {
		at := fmt.Sprintf("%s:%s", src.Name, st.Pos())
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return nil, fmt.Errorf("%s: not a curl command (a pipeline, a list or a compound command): give each curl command alone", at)
		}
		words := make([]string, len(call.Args))
		for i, w := range call.Args {
			v, err := wordText(w)
			if err != nil {
				return nil, fmt.Errorf("%s:%s: %w", src.Name, w.Pos(), err)
			}
			words[i] = v
		}
		if name := filepath.Base(words[0]); name != "curl" && name != "curl.exe" {
			return nil, fmt.Errorf("%s: %q is not curl: give curl commands only", at, words[0])
		}
		c, err := readCurl(ctx, words[1:], src.Dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		c.at = at
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// wordText is a shell word's value after quote removal: what curl gets as
// one argument. $NAME and ${NAME} become sentinels; anything that would
// run a command or compute a value is refused.
func wordText(w *syntax.Word) (string, error) {
	var b strings.Builder
	if err := wordParts(&b, w.Parts, false); err != nil {
		return "", err
	}
	return b.String(), nil
}

func wordParts(b *strings.Builder, parts []syntax.WordPart, quoted bool) error {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, quoted))
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			v, _, err := expand.Format(nil, p.Value, nil)
			if err != nil {
				return fmt.Errorf("$'...': %w", err)
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			if err := wordParts(b, p.Parts, true); err != nil {
				return err
			}
		case *syntax.ParamExp:
			if !simpleParam(p) {
				return errors.New("only $NAME and ${NAME} are read from the environment, not other parameter expansions")
			}
			b.WriteString(envOpen + p.Param.Value + envClose)
		case *syntax.CmdSubst:
			return errors.New("a command substitution $(...): run it yourself and put its output in an environment variable ($NAME)")
		default:
			return fmt.Errorf("%T is not supported in a curl command: give the values as text or $NAME", p)
		}
	}
	return nil
}

// simpleParam reports whether a parameter expansion is $NAME or ${NAME}.
func simpleParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil &&
		!p.Excl && !p.Length && !p.Width && !p.IsSet && p.Flags == nil && p.NestedParam == nil &&
		sentinel.MatchString(envOpen+p.Param.Value+envClose)
}

// unescape removes a shell's backslashes: outside quotes every backslash
// escapes the next character; within double quotes only before $, `, ",
// \ and a newline.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++ // a line continuation
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// curl's options that a draft ignores: they change what curl prints or
// how it connects, not what it sends. True: the option takes a value.
var ignored = map[string]bool{
	"--silent": false, "--show-error": false, "--verbose": false, "--include": false, "--fail": false,
	"--fail-with-body": false, "--globoff": false, "--no-buffer": false, "--compressed": false,
	"--http1.1": false, "--http1.0": false, "--tlsv1.2": false, "--tlsv1.3": false, "--tlsv1": false,
	"--ipv4": false, "--ipv6": false, "--progress-bar": false, "--no-progress-meter": false,
	"--path-as-is": false, "--location-trusted": false, "--ssl-no-revoke": false, "--raw": false,
	"--no-keepalive": false, "--disable": false, "--remote-name": false, "--remote-name-all": false,
	"--styled-output": false, "--no-styled-output": false, "--show-headers": false,
	"--output": true, "--write-out": true, "--connect-timeout": true, "--retry": true,
	"--retry-delay": true, "--retry-max-time": true, "--max-redirs": true, "--dump-header": true,
	"--cookie-jar": true, "--limit-rate": true, "--stderr": true, "--trace": true, "--trace-ascii": true,
	"--cacert": true, "--capath": true, "--resolve": true, "--connect-to": true, "--interface": true,
	"--keepalive-time": true, "--expect100-timeout": true, "--retry-all-errors": false, "--sslv2": false,
}

// short maps curl's one-letter options to their long names.
var short = map[byte]string{
	'X': "--request", 'H': "--header", 'd': "--data", 'u': "--user", 'b': "--cookie", 'A': "--user-agent",
	'e': "--referer", 'm': "--max-time", 'o': "--output", 'w': "--write-out", 'F': "--form", 'T': "--upload-file",
	'x': "--proxy", 'E': "--cert", 'c': "--cookie-jar", 'D': "--dump-header", 'G': "--get", 'I': "--head",
	's': "--silent", 'S': "--show-error", 'v': "--verbose", 'L': "--location", 'k': "--insecure",
	'i': "--include", 'f': "--fail", 'g': "--globoff", 'N': "--no-buffer", '4': "--ipv4", '6': "--ipv6",
	'#': "--progress-bar", 'O': "--remote-name", 'r': "--range", 'K': "--config",
}

// withValue are the options, beyond the ignored ones, that take a value.
var withValue = map[string]bool{
	"--request": true, "--header": true, "--data": true, "--data-raw": true, "--data-ascii": true,
	"--data-binary": true, "--data-urlencode": true, "--json": true, "--user": true, "--cookie": true,
	"--user-agent": true, "--referer": true, "--max-time": true, "--form": true, "--form-string": true,
	"--upload-file": true, "--proxy": true, "--cert": true, "--key": true, "--url": true, "--range": true,
	"--oauth2-bearer": true, "--config": true,
}

// headerName is the form of a header's name (RFC 9110's token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// readCurl reads curl's arguments (after "curl").
func readCurl(ctx context.Context, args []string, dir string) (*curlCmd, error) {
	c := &curlCmd{}
	var urls []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		var opt, val string
		hasVal := false
		switch {
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			if a == "--" {
				urls = append(urls, args[i+1:]...)
				i = len(args)
				continue
			}
			urls = append(urls, a)
			continue
		case strings.HasPrefix(a, "--"):
			opt = a
		default:
			// -sSL, -XPOST, -H'X: y': letters until one takes a value.
			for j := 1; j < len(a); j++ {
				long, ok := short[a[j]]
				if !ok {
					return nil, fmt.Errorf("curl option -%c: not one ceiling init knows (it reads what a request sends: -X, -H, -d, -u, -b, --json...)", a[j])
				}
				if withValue[long] || ignored[long] {
					opt = long
					if j+1 < len(a) {
						val, hasVal = a[j+1:], true
					}
					break
				}
				if err := c.flag(long); err != nil {
					return nil, err
				}
			}
			if opt == "" {
				continue
			}
		}
		takes, isIgnored := ignored[opt]
		if !isIgnored {
			takes = withValue[opt]
		}
		if takes && !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("curl option %s wants a value", opt)
			}
			i++
			val = args[i]
		}
		switch {
		case isIgnored:
		case takes:
			var err error
			if urls, err = c.option(ctx, opt, val, dir, urls); err != nil {
				return nil, err
			}
		default:
			if err := c.flag(opt); err != nil {
				return nil, err
			}
		}
	}
	switch len(urls) {
	case 0:
		return nil, errors.New("no URL")
	case 1:
		c.url = urls[0]
	default:
		return nil, fmt.Errorf("%d URLs (%s): give one curl command per request", len(urls), strings.Join(urls, ", "))
	}
	return c, nil
}

// flag sets an option without a value.
func (c *curlCmd) flag(opt string) error {
	switch opt {
	case "--get":
		c.get = true
	case "--head":
		c.head = true
	case "--location":
		c.location = true
	case "--insecure":
		c.insecure = true
	case "--http2", "--http2-prior-knowledge":
		c.http2 = true
	case "--basic":
	case "--digest", "--ntlm", "--negotiate", "--aws-sigv4", "--anyauth":
		return fmt.Errorf("curl option %s: ceiling sends no such authentication; give the header it produces with -H", opt)
	default:
		if _, ok := ignored[opt]; ok {
			return nil
		}
		return fmt.Errorf("curl option %s: not one ceiling init knows (it reads what a request sends: -X, -H, -d, -u, -b, --json...)", opt)
	}
	return nil
}

// option sets an option with a value.
func (c *curlCmd) option(ctx context.Context, opt, val, dir string, urls []string) ([]string, error) {
	if why, ok := refusedOptions[opt]; ok {
		return nil, errors.New(why)
	}
	switch opt {
	case "--url":
		urls = append(urls, val)
	case "--request":
		if !isScheme(val) || strings.Contains(val, "-") {
			return nil, fmt.Errorf("-X %q: want a method such as POST", val)
		}
		c.method = val
	case "--header":
		return urls, c.header(val)
	case "--user-agent":
		c.headers = append(c.headers, [2]string{"User-Agent", val})
	case "--referer":
		c.headers = append(c.headers, [2]string{"Referer", val})
	case "--range":
		c.headers = append(c.headers, [2]string{"Range", "bytes=" + val})
	case "--oauth2-bearer":
		c.headers = append(c.headers, [2]string{"Authorization", "Bearer " + val})
	case "--user":
		c.user = val
	case "--cookie":
		if !strings.Contains(val, "=") {
			return nil, fmt.Errorf("-b %s reads cookies from a file: give them as -b 'name=value; other=value'", val)
		}
		c.cookie = val
	case "--max-time":
		secs, err := strconv.ParseFloat(val, 64)
		if err != nil || secs <= 0 || secs > 3600 {
			return nil, fmt.Errorf("--max-time %q: want seconds", val)
		}
		c.maxTime = time.Duration(secs * float64(time.Second))
	case "--data", "--data-ascii", "--data-binary", "--data-raw", "--json", "--data-urlencode", "--upload-file":
		return urls, c.body(ctx, opt, val, dir)
	}
	return urls, nil
}

// refusedOptions are the options with a value that a plan has no
// counterpart for, and what to give instead.
var refusedOptions = map[string]string{
	"--form":        "multipart forms (-F) are not something a plan sends: give the body with -d or --data-binary and its Content-Type with -H",
	"--form-string": "multipart forms (-F) are not something a plan sends: give the body with -d or --data-binary and its Content-Type with -H",
	"--proxy":       "a proxy (-x): ceiling connects to the target itself",
	"--cert":        "client certificates (-E, --key): ceiling sends none",
	"--key":         "client certificates (-E, --key): ceiling sends none",
	"--config":      "-K reads options from a file: give them on the command line",
}

// header reads -H's value, "Name: value": "Name;" sends the header with
// no value, and "Name:" none (it removes a header curl would send).
func (c *curlCmd) header(val string) error {
	if strings.HasPrefix(val, "@") {
		return errors.New("-H @file: give each header with its own -H")
	}
	name, value, ok := strings.Cut(val, ":")
	if !ok {
		if n, found := strings.CutSuffix(val, ";"); found {
			name, value, ok = n, "", true // "X;" sends X with no value
		}
	}
	name = strings.TrimSpace(name)
	if !ok || !headerName.MatchString(name) {
		return fmt.Errorf("-H %q: want \"Name: value\"", val)
	}
	value = strings.TrimSpace(value)
	if value == "" && !strings.HasSuffix(val, ";") {
		// "X:" removes a header curl would send: nothing to send.
		return nil
	}
	c.headers = append(c.headers, [2]string{name, value})
	return nil
}

// body reads an option that gives the request's body: -d and its kinds
// (@file reads a file), --json, --data-urlencode, and -T's file.
func (c *curlCmd) body(ctx context.Context, opt, val, dir string) error {
	switch opt {
	case "--upload-file":
		b, err := c.readData(ctx, val, dir)
		if err != nil {
			return err
		}
		c.upload = b
		return nil
	case "--data-urlencode":
		d, err := c.urlencoded(ctx, val, dir)
		if err != nil {
			return err
		}
		c.data = append(c.data, d)
		c.hasData = true
		return nil
	}
	d := val
	if opt != "--data-raw" && strings.HasPrefix(val, "@") {
		b, err := c.readData(ctx, val[1:], dir)
		if err != nil {
			return err
		}
		d = b
		if opt == "--data" || opt == "--data-ascii" {
			d = strings.NewReplacer("\r", "", "\n", "").Replace(d) // as curl does
		}
	}
	c.data = append(c.data, d)
	c.hasData = true
	c.json = c.json || opt == "--json"
	return nil
}

// readData reads a file named by a curl option (@file, -T file),
// relative to dir (the curl file's folder; "" for the working
// directory). Only a regular file is read, within dir or the working
// directory once its links are followed, never one of /proc, /dev or
// /sys: a plan sends what it read to its target, so a draft must not
// copy the machine's other files or its environment into it.
func (c *curlCmd) readData(ctx context.Context, name, dir string) (string, error) {
	name, unset := withEnv(name)
	if len(unset) > 0 {
		return "", fmt.Errorf("@%s reads $%s, which is not set", name, unset[0])
	}
	if name == "-" {
		return "", errors.New("@- reads the body from standard input: put it in a file and give @file")
	}
	given := name
	if rest, ok := strings.CutPrefix(name, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			name = filepath.Join(home, rest)
		}
	}
	if dir != "" && !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	path, err := allowedFile(name, dir, "the curl file's folder")
	if err != nil {
		return "", fmt.Errorf("%s: %w", given, err)
	}
	b, err := inputfile.Read(ctx, path, maxCurlBytes)
	if err != nil {
		return "", err
	}
	c.files = append(c.files, given)
	return string(b), nil
}

// systemDirs hold files that are the machine's, not the user's: the
// processes' environments and memory (/proc), devices (/dev), the
// kernel's settings (/sys).
var systemDirs = []string{"/proc", "/dev", "/sys"}

// allowedFile returns the real path of the file at name (its links
// followed) if a draft may read it: a regular file within dir (when
// given; folder names it in messages) or the working directory, not in
// systemDirs.
func allowedFile(name, dir, folder string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	var roots []string
	for _, r := range []string{dir, "."} {
		if r == "" {
			continue
		}
		if r, err := filepath.Abs(r); err == nil {
			roots = append(roots, r)
			if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
				roots = append(roots, real)
			}
		}
	}
	// Where it is named, then where its links lead: a file outside is
	// not even looked at.
	if err := allowedPlace(abs, roots, dir, folder); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	if err := allowedPlace(real, roots, dir, folder); err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s): ceiling init reads a body from a file", kindOf(st.Mode()))
	}
	return real, nil
}

// allowedPlace says why path may not be read, if it may not: it is in
// systemDirs, or under none of roots.
func allowedPlace(path string, roots []string, dir, folder string) error {
	for _, sys := range systemDirs {
		if within(path, sys) {
			return fmt.Errorf("a file of %s: ceiling init reads the user's files only", sys)
		}
	}
	if slices.ContainsFunc(roots, func(r string) bool { return within(path, r) }) {
		return nil
	}
	where := "the working directory"
	if dir != "" {
		where = folder + " and the working directory"
	}
	return fmt.Errorf("%s is outside %s: ceiling init reads files only there", path, where)
}

// within reports whether path is root or lies under it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// kindOf names a file's type, for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "not a file"
}

// urlencoded is the value of --data-urlencode as curl sends it.
func (c *curlCmd) urlencoded(ctx context.Context, val, dir string) (string, error) {
	switch i := strings.IndexAny(val, "=@"); {
	case i < 0:
		return curlEscape(val), nil
	case val[i] == '=':
		if i == 0 {
			return curlEscape(val[1:]), nil
		}
		return val[:i] + "=" + curlEscape(val[i+1:]), nil
	default:
		b, err := c.readData(ctx, val[i+1:], dir)
		if err != nil {
			return "", err
		}
		if i == 0 {
			return curlEscape(b), nil
		}
		return val[:i] + "=" + curlEscape(b), nil
	}
}

// curlEscape percent-encodes s as curl does (curl_easy_escape): every
// byte but letters, digits and -._~ as %XX, a space as %20 (where Go's
// url.QueryEscape writes +).
func curlEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
