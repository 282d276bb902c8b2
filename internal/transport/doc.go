// Package transport defines one exchange with a target and its Outcome: the
// failure classes every report counts, and the small interfaces that protocol
// implementations satisfy: httpx (HTTP/1.1, HTTP/2) the Exchanger and
// Session and, on Linux, the Loop (exchanges driven from the caller's
// goroutine); wsx (WebSocket) the SocketDialer and Socket.
//
// It does not time exchanges: the load executors hold the run's monotonic
// base and record intended, start and end themselves. A failure is data (an
// Outcome.Kind), never a Go error and never logged per request.
//
// Concurrency: a Session is owned by one worker or virtual user at a time; an
// Exchanger creates sessions and is safe for concurrent use.
package transport
