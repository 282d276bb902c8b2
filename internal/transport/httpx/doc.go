// Package httpx implements transport sessions for HTTP: HTTP/1.1 through a
// small client of our own (each session owns its keep-alive connections, a
// request is encoded once and written in one system call, responses are
// parsed without allocating, nothing is retried except a request that met a
// keep-alive connection the server had already closed, bodies are bounded)
// and HTTP/2 (h2 over TLS, h2c over plain text) through net/http.
//
// The HTTP/1.1 client replaced fasthttp's after bench/compare.sh measured
// it: 6.3–8.3 µs of CPU per request against 7.6–8.2 for fasthttp, with wrk
// at 6.0–7.5 in the same runs.
//
// Loop (Linux) is a second HTTP/1.1 client, for plain-HTTP requests fixed
// or rendered per send: non-blocking sockets driven by one epoll set from
// its caller's goroutine (transport.Loop), sharing the wire code, limits
// and error classes with H1; parser reads its responses incrementally,
// held to readResponse by tests and a fuzzer.
//
// Redirects are not followed unless the Config says so; a 3xx the scenario
// does not expect is then a Redirect failure. Every error is classified into
// a transport.Kind; nothing is logged per request.
//
// Concurrency: a Client is safe for concurrent use; each Session belongs to
// one goroutine.
package httpx
