// Package wsx opens WebSocket sockets for the transport.Socket interface,
// with gorilla/websocket: pooled write buffers, a 1 KiB read buffer, a cap
// on received frames, pings answered.
//
// Concurrency: a Dialer is safe for concurrent use; a socket's WriteText is
// safe from several goroutines (a mutex per socket), Read from one.
package wsx
