// Package testkit holds what the tests of many packages share: the
// servers they load and the processes they start.
//
//   - Target is an HTTP server on loopback whose delay and status the test
//     sets, that counts the requests it answered, and that may have a
//     capacity past which it answers 503 (a target whose edge is known).
//   - WebSocket serves upgraded connections with a function of the test's;
//     Echo sends every message back, Ack answers each JSON frame with its
//     id after a delay, as a service that acknowledges messages does.
//   - Listen and FreePort hand out loopback ports; ServeTCP runs a raw
//     TCP server of the test's.
//   - Start and Group run a child process in a process group of its own
//     that dies with the test: killed as a group when the test ends and,
//     on Linux, killed by the kernel when the test binary dies, however it
//     dies (a parent-death signal). ExitWithOwner ends a re-executed test
//     binary that no process group reaches when the test binary is gone.
//   - RemoveCgroup removes a cgroup a test made when the test ends.
//
// It is for tests only: no package's non-test code may import it (the
// layer test of cmd/ceiling checks this). Every server it starts listens
// on 127.0.0.1 and is closed by the test's cleanup; it starts no load of
// its own.
//
// Concurrency: a Target's setters and counters may be called from any
// goroutine while it serves; the functions that take a testing.TB are
// called from the test's goroutine, as testing.TB's methods are.
package testkit
