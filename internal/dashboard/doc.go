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
// first request with it sets, scoped to the stream's and the report's
// path, /live/). Without a token it answers only requests that name it by
// a loopback address, localhost or the address it was asked for (DNS
// rebinding). Whoever reaches it holds a bounded share of it: a few
// connections and event streams per address and in all (conns.go), each
// event written within seconds or the viewer dropped, so that a flood of
// clients costs the run nothing it measures.
//
// Publish, End and Close are safe from any goroutine; each event stream
// is served by the goroutine of its request, which waits for news, the
// client's leaving, or Close.
package dashboard
