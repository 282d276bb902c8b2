package wsx

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

func server(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/echo", testkit.WebSocket(websocket.Upgrader{}, testkit.Echo))
	mux.Handle("/big", testkit.WebSocket(websocket.Upgrader{}, func(c *websocket.Conn) {
		c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 4096)))
		time.Sleep(time.Second)
	}))
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return testkit.WSURL(srv.URL)
}

func TestEchoAndLimits(t *testing.T) {
	base := server(t)
	d := New(false)
	s, err := d.Dial(context.Background(), transport.SocketConfig{URL: base + "/echo", Timeout: time.Second, MaxFrameBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"hello", `{"clientId":"x"}`} {
		if err := s.WriteText([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Read()
		if err != nil || string(got) != msg {
			t.Fatalf("Read() = %q, %v, want %q", got, err, msg)
		}
	}
	s.Close()

	big, err := d.Dial(context.Background(), transport.SocketConfig{URL: base + "/big", Timeout: time.Second, MaxFrameBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := big.Read(); err == nil {
		t.Errorf("a 4 KiB frame past a 1 KiB limit was read")
	}
	big.Close()
}

func TestDialFailures(t *testing.T) {
	base := server(t)
	d := New(false)
	_, err := d.Dial(context.Background(), transport.SocketConfig{URL: base + "/forbidden", Timeout: time.Second})
	if k := transport.ClassifySocketError(err); k != transport.HTTP4xx {
		t.Errorf("handshake answered 403: %v (%v), want http_4xx", k, err)
	}
	_, err = d.Dial(context.Background(), transport.SocketConfig{URL: fmt.Sprintf("ws://127.0.0.1:%d/", testkit.FreePort(t)), Timeout: time.Second})
	if k := transport.ClassifySocketError(err); k != transport.Refused {
		t.Errorf("closed port: %v (%v), want refused", k, err)
	}
}

// Server pings are answered while the client waits for frames.
func TestPingsAnswered(t *testing.T) {
	pong := make(chan struct{}, 1)
	srv := testkit.NewWebSocket(t, func(c *websocket.Conn) {
		c.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
		c.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second))
		c.ReadMessage() // runs the pong handler
	})
	s, err := New(false).Dial(context.Background(), transport.SocketConfig{URL: testkit.WSURL(srv.URL), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go s.Read() // reading is what answers pings
	select {
	case <-pong:
	case <-time.After(2 * time.Second):
		t.Fatal("the ping was not answered")
	}
}
