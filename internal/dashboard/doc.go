// Package dashboard serves the live page of a run (--dashboard ADDR): one
// HTML page that shows what the final report shows, as it happens, and
// stays current by server-sent events.
//
// The server knows nothing of runs: its owner publishes a title and a body
// (HTML the report package rendered, with the same tables and plots as
// report.html) whenever there is news, and ends it with a last body and
// the report's path. The page itself is static HTML and a few lines of
// script, with no network access beyond its own server, so that a page
// opened late, or with scripts off, shows the latest body as it loads.
//
// It listens on loopback unless asked otherwise; beyond loopback it needs
// a token, asked on every request (the query's token, or the cookie the
// first request with it sets).
//
// Publish, End and Close are safe from any goroutine; each event stream
// is served by the goroutine of its request, which waits for news, the
// client's leaving, or Close.
package dashboard
