// Package httpx implements transport sessions for HTTP: HTTP/1.1 through
// fasthttp's client (keep-alive, a connection cap, no retries, bounded
// bodies) and HTTP/2 (h2 over TLS, h2c over plain text) through net/http and
// golang.org/x/net/http2.
//
// Redirects are not followed unless the Config says so; a 3xx the scenario
// does not expect is then a Redirect failure. Every error is classified into
// a transport.Kind; nothing is logged per request.
//
// Concurrency: a Client is safe for concurrent use; each Session belongs to
// one goroutine.
package httpx
