package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/failure"
)

// holdConn opens a connection to addr, sends what, and returns a channel
// closed when the agent closes the connection (what it answers is read
// and dropped).
func holdConn(t *testing.T, addr, what string) <-chan struct{} {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, what); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c)
		close(closed)
	}()
	return closed
}

// healthIn asks an agent's health with a client that waits at most d.
func healthIn(addr string, d time.Duration) (time.Duration, error) {
	start := time.Now()
	resp, err := (&http.Client{Timeout: d}).Get("http://" + addr + pathHealth)
	if err != nil {
		return time.Since(start), err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Since(start), fmt.Errorf("health: %s", resp.Status)
	}
	return time.Since(start), nil
}

// Connections that hold the agent without finishing a request (slowloris)
// are closed within its timeouts, and a real health check is answered
// meanwhile: connections idle after a health check, requests whose
// header never ends, and sessions whose body never comes (200,000 bytes
// announced, 1 sent), with and without the token.
func TestAgentClosesSlowConnections(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	addr := agent(t, &Server{Conns: Conns{ReadHeader: timeout, Read: timeout, Write: timeout, Idle: timeout, PerClient: 1000}})
	var held []<-chan struct{}
	for range 20 {
		held = append(held, holdConn(t, addr, "GET /v1/health HTTP/1.1\r\nHost: agent\r\n\r\n"))
	}
	for range 10 {
		held = append(held, holdConn(t, addr, "GET /v1/health HTTP/1.1\r\nHost: agent\r\n"))
	}
	for range 10 {
		held = append(held, holdConn(t, addr, "POST /v1/session HTTP/1.1\r\nHost: agent\r\nContent-Length: 200000\r\n\r\n{"))
	}
	for range 10 {
		held = append(held, holdConn(t, addr, "POST /v1/session HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer "+token+"\r\nContent-Length: 200000\r\n\r\n{"))
	}
	if took, err := healthIn(addr, 5*time.Second); err != nil || took > 2*time.Second {
		t.Errorf("a health check while %d connections are held: %v after %v, want an answer at once", len(held), err, took)
	}
	deadline := time.After(10 * time.Second) // the timeouts are 0.5 s: a wide margin on a busy machine
	for i, closed := range held {
		select {
		case <-closed:
		case <-deadline:
			t.Fatalf("connection %d of %d still open 10 s after it stopped sending, want it closed within the agent's timeouts (%v)", i+1, len(held), timeout)
		}
	}
	if _, err := healthIn(addr, 5*time.Second); err != nil {
		t.Errorf("a health check after: %v", err)
	}
}

// One client (one IP address) holds at most Conns.PerClient connections
// at once: the next is closed at once, and once one of its connections
// closes, it may open another.
func TestAgentCapsConnectionsPerClient(t *testing.T) {
	t.Parallel()
	const perClient = 5
	addr := agent(t, &Server{Conns: Conns{PerClient: perClient}})
	conns := make([]net.Conn, perClient)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
		// A request answered shows that the agent took the connection.
		io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: agent\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatalf("connection %d of %d (within the cap): %v", i+1, perClient, err)
		}
	}
	over := holdConn(t, addr, "GET /v1/health HTTP/1.1\r\nHost: agent\r\n\r\n")
	select {
	case <-over:
	case <-time.After(5 * time.Second):
		t.Fatalf("connection %d from one client still open after 5 s, want it closed at once (the cap is %d)", perClient+1, perClient)
	}
	if _, err := healthIn(addr, time.Second); err == nil {
		t.Errorf("a health check on a new connection while %d are held: answered, want it refused", perClient)
	}
	conns[0].Close()
	var err error
	for range 50 { // the agent counts the closed connection out when it reads its end
		if _, err = healthIn(addr, 2*time.Second); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("a health check once a connection closed: %v, want it answered", err)
	}
}

// A body larger than the agent reads is refused before it is read (413),
// and the connection closed: a session's past 64 MiB, any other request's
// past 1 MiB. A coordinator takes it as bad input.
func TestAgentRefusesLargeBodies(t *testing.T) {
	t.Parallel()
	addr := agent(t, &Server{})
	for _, tt := range []struct{ path, length string }{
		{"/v1/session", "70000000"},
		{"/v1/session/x/step", "2000000"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer %s\r\nContent-Length: %s\r\n\r\n{", tt.path, token, tt.length)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		answer, err := io.ReadAll(c) // to the end: the agent closes the connection
		if err != nil || !strings.HasPrefix(string(answer), "HTTP/1.1 413 ") {
			t.Errorf("POST %s of %s bytes: %.60q, %v; want 413 and the connection closed", tt.path, tt.length, answer, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem(w, http.StatusRequestEntityTooLarge, "too large")
	}))
	t.Cleanup(srv.Close)
	c := &Coordinator{client: http.DefaultClient, agents: []*peer{{url: srv.URL}}}
	var bad *failure.InputError
	if err := c.call(context.Background(), c.agents[0], http.MethodPost, pathSession, Open{}, nil); !errors.As(err, &bad) {
		t.Errorf("a 413 answer: %v, want a failure.InputError", err)
	}
}

// A coordinator drops an idle connection before an agent closes it (its
// idle timeout): a request sent on a connection the agent is closing
// would fail, and a step's is not sent again.
func TestCoordinatorDropsIdleConnectionsFirst(t *testing.T) {
	t.Parallel()
	if got, agent := newTransport().IdleConnTimeout, (Conns{}).idle(); got <= 0 || got >= agent {
		t.Errorf("the coordinator keeps idle connections %v, want less than an agent's idle timeout, %v", got, agent)
	}
}
