package httpx

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// parseInPieces feeds raw to a parser in pieces of the sizes sizes cycles
// through, then an end of stream, and returns what it read, the body it
// kept (keep) and the bytes left unused after a complete response.
func parseInPieces(raw string, isHead, keep bool, maxBody int64, sizes []int) (response, []byte, int, error) {
	var p parser
	p.reset(isHead, keep, maxBody)
	defer func() { release(p.body, &p.reserved) }() // the budget whole again, as after an exchange
	b := []byte(raw)
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), max(sizes[i%len(sizes)], 1))
		used, done, err := p.feed(b[:n])
		if err != nil {
			return p.resp, p.body, 0, err
		}
		if done {
			return p.resp, p.body, len(b) - used, nil
		}
		b = b[n:]
	}
	if done, err := p.eof(); !done {
		return p.resp, p.body, 0, err
	}
	return p.resp, p.body, 0, nil
}

// readWhole is readResponse over raw, the body it kept (keep), and the
// bytes it left unread.
func readWhole(raw string, isHead, keep bool, maxBody int64) (response, []byte, int, error) {
	sr := strings.NewReader(raw)
	br := bufio.NewReaderSize(sr, readBufferSize)
	c := capture{keepBody: keep}
	defer c.done() // the budget whole again, as after an exchange
	resp, err := readResponse(br, isHead, maxBody, &c)
	return resp, c.body, sr.Len() + br.Buffered(), err
}

var parseErrs = []error{errMalformed, errBodyTooLarge, io.ErrUnexpectedEOF, io.EOF}

// sameParse fails t when the incremental parser read raw differently from
// readResponse, keeping the body or not: the same status, framing, error
// and, when it keeps the body, the same body; none when it does not.
func sameParse(t *testing.T, raw string, isHead bool, sizes []int) {
	t.Helper()
	for _, keep := range []bool{false, true} {
		sameParseKeep(t, raw, isHead, keep, sizes)
	}
}

func sameParseKeep(t *testing.T, raw string, isHead, keep bool, sizes []int) {
	t.Helper()
	want, wantBody, wantLeft, wantErr := readWhole(raw, isHead, keep, 100)
	got, gotBody, gotLeft, gotErr := parseInPieces(raw, isHead, keep, 100, sizes)
	if !keep && len(gotBody) != 0 {
		t.Fatalf("%q in pieces %v: kept %d body bytes, asked to keep none", raw, sizes, len(gotBody))
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q in pieces %v: error %v, readResponse %v", raw, sizes, gotErr, wantErr)
	}
	for _, e := range parseErrs {
		if errors.Is(wantErr, e) != errors.Is(gotErr, e) {
			t.Fatalf("%q in pieces %v: error %v, readResponse %v", raw, sizes, gotErr, wantErr)
		}
	}
	if wantErr != nil && !errors.Is(wantErr, errBodyTooLarge) {
		return // the connection is dropped: nothing else is used
	}
	if got.status != want.status || got.close != want.close || got.body != want.body || (wantErr == nil && gotLeft != wantLeft) {
		t.Fatalf("%q in pieces %v: status %d close %v body %d left %d; readResponse %d %v %d %d",
			raw, sizes, got.status, got.close, got.body, gotLeft, want.status, want.close, want.body, wantLeft)
	}
	if keep && wantErr == nil && string(gotBody) != string(wantBody) {
		t.Fatalf("%q in pieces %v: kept body %q, readResponse %q", raw, sizes, gotBody, wantBody)
	}
}

// parseCases are the responses of TestReadResponse and a few more: a
// second response after the first, a long header line, a bare LF.
var parseCases = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 204\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n3\r\nabc\r\n0\r\nTrailer: y\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\nabcdef",
	"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n",
	"HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("x", 500),
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
	"SSH-2.0-OpenSSH\r\n\r\n",
	"HTTP/1.1 2x0 OK\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
	"HTTP/1.1 101 Switching\r\n\r\n",
	"",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLineBytes) + "\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLineBytes-6) + "\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLineBytes-5) + "\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", readBufferSize) + "\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;" + strings.Repeat("e", 3*readBufferSize) + "\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
	"HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Many: "+strings.Repeat("b", 1000)+"\r\n", 70) + "\r\n",
}

// The incremental parser reads every case as readResponse does, however
// the bytes are cut into reads.
func TestParserMatchesReadResponse(t *testing.T) {
	for _, raw := range parseCases {
		for _, isHead := range []bool{false, true} {
			for _, sizes := range [][]int{{1 << 20}, {1}, {2}, {3, 7}, {16, 1, 5}, {readBufferSize - 1}} {
				sameParse(t, raw, isHead, sizes)
			}
		}
	}
}

// The parser keeps the header lines for Retry-After, as readResponse does.
func TestParserKeepsHeader(t *testing.T) {
	var p parser
	p.reset(false, false, 100)
	raw := "HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nContent-Length: 0\r\n\r\n"
	if _, done, err := p.feed([]byte(raw)); !done || err != nil {
		t.Fatalf("feed: done %v, err %v", done, err)
	}
	if got, want := string(p.header), "Retry-After: 3\r\nContent-Length: 0\r\n"; got != want {
		t.Errorf("header = %q, want %q", got, want)
	}
}

// The parser keeps the body a Capture asks for as the server framed it
// (readResponse's, by TestParserMatchesReadResponse), and nothing of a
// response that has none.
func TestParserKeepsBody(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		isHead bool
		want   string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, "hello"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n3\r\nabc\r\n0\r\nT: y\r\n\r\n", false, "helloabc"},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nabcdef", false, "abcdef"},
		{"after 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false, "ok"},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, ""},
		{"204", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", false, ""},
	}
	for _, tt := range tests {
		for _, sizes := range [][]int{{1 << 20}, {1}, {3, 7}} {
			_, body, _, err := parseInPieces(tt.raw, tt.isHead, true, 100, sizes)
			if err != nil || string(body) != tt.want {
				t.Errorf("%s in pieces %v: body %q, error %v; want %q", tt.name, sizes, body, err, tt.want)
			}
		}
	}
}

func FuzzParserMatchesReadResponse(f *testing.F) {
	for i, raw := range parseCases {
		if len(raw) < 1024 { // the long ones make minimizing crawl
			f.Add(raw, i%2 == 0, uint8(i+1), uint8(3*i+2))
		}
	}
	f.Fuzz(func(t *testing.T, raw string, isHead bool, a, b uint8) {
		sameParse(t, raw, isHead, []int{int(a), int(b)})
	})
}

// BenchmarkParser is the parsing cost of a typical small response read in
// one piece; it must not allocate.
func BenchmarkParser(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 06:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n")
	var p parser
	parse := func() {
		p.reset(false, false, 1<<20)
		if _, done, err := p.feed(raw); !done || err != nil {
			b.Fatal(done, err)
		}
	}
	parse()
	b.ReportAllocs()
	for b.Loop() {
		parse()
	}
	if n := testing.AllocsPerRun(100, parse); n != 0 {
		b.Fatalf("the parser allocates %v times", n)
	}
}
