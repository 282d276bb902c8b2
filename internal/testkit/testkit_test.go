package testkit

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

// roleEnv gives the test binary, re-executed by the process tests, its
// part: "child", "control" and "owner" run TestChild (which starts a
// grandchild and waits to be killed), "stand-in" sleeps in TestMain until
// ExitWithOwner ends it.
const roleEnv = "TESTKIT_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "stand-in" {
		ExitWithOwner()
		time.Sleep(time.Minute) // the owner's end ends it long before
		os.Exit(0)
	}
	Own()
	goleak.VerifyTestMain(m)
}

func TestTarget(t *testing.T) {
	tg := NewTarget(t, TargetConfig{Status: http.StatusTeapot, Body: "tea"})
	get := func() (int, string, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := http.Get(tg.URL + "/any/path")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}
	if code, body, _ := get(); code != http.StatusTeapot || body != "tea" {
		t.Errorf("GET = %d %q, want 418 \"tea\"", code, body)
	}
	tg.SetStatus(0)
	tg.SetDelay(50 * time.Millisecond)
	if code, _, took := get(); code != http.StatusOK || took < 50*time.Millisecond || took > 5*time.Second {
		t.Errorf("GET after SetStatus(0), SetDelay(50ms) = %d in %s, want 200 in 50ms or more", code, took)
	}
	if n := tg.Hits(); n != 2 {
		t.Errorf("Hits() = %d, want 2", n)
	}
	http.DefaultClient.CloseIdleConnections()
}

// A target with a capacity answers what its bucket holds and sheds the
// rest with 503 at once: of 20 requests sent one after the other, the
// first is answered, and not all of them.
func TestTargetCapacity(t *testing.T) {
	tg := NewTarget(t, TargetConfig{Capacity: 50, Body: "ok"})
	codes := map[int]int{}
	for range 20 {
		resp, err := http.Get(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
		if len(codes) == 1 && resp.StatusCode != http.StatusOK {
			t.Fatalf("the first request: %d, want 200", resp.StatusCode)
		}
	}
	if codes[http.StatusOK] < 1 || codes[http.StatusServiceUnavailable] < 1 || codes[http.StatusOK]+codes[http.StatusServiceUnavailable] != 20 || tg.Hits() != 20 {
		t.Errorf("20 requests at once to a target of 50/s: %v, %d hits; want some 200, the rest 503, all counted", codes, tg.Hits())
	}
	http.DefaultClient.CloseIdleConnections()
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.NetConn().SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

func TestEcho(t *testing.T) {
	c := dial(t, WSURL(NewWebSocket(t, Echo).URL))
	for _, m := range []struct {
		kind int
		data string
	}{{websocket.TextMessage, "hello"}, {websocket.BinaryMessage, "\x00\x01"}} {
		if err := c.WriteMessage(m.kind, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
		kind, got, err := c.ReadMessage()
		if err != nil || kind != m.kind || string(got) != m.data {
			t.Errorf("echo of %d %q = %d %q, %v", m.kind, m.data, kind, got, err)
		}
	}
}

func TestAck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ack  Ack
		send string
		want string
	}{
		{"default", Ack{}, `{"clientId":"a1","x":2}`, `{"clientId":"a1"}`},
		{"field and reply", Ack{Field: "id", Reply: `{"type":"ack","id":%q}`}, `{"id":"7"}`, `{"type":"ack","id":"7"}`},
		{"no id", Ack{}, `not json`, `{"clientId":""}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, WSURL(NewWebSocket(t, tc.ack.Serve).URL))
			if err := c.WriteMessage(websocket.TextMessage, []byte(tc.send)); err != nil {
				t.Fatal(err)
			}
			if _, got, err := c.ReadMessage(); err != nil || string(got) != tc.want {
				t.Errorf("ack of %s = %s, %v, want %s", tc.send, got, err, tc.want)
			}
		})
	}
}

func TestAckDelay(t *testing.T) {
	c := dial(t, WSURL(NewWebSocket(t, Ack{Delay: 30 * time.Millisecond}.Serve).URL))
	start := time.Now()
	c.WriteMessage(websocket.TextMessage, []byte(`{"clientId":"x"}`))
	if _, _, err := c.ReadMessage(); err != nil || time.Since(start) < 30*time.Millisecond {
		t.Errorf("ack after %s (%v), want 30ms or more", time.Since(start), err)
	}
}

func TestPorts(t *testing.T) {
	ln := Listen(t)
	if a := ln.Addr().(*net.TCPAddr); !a.IP.IsLoopback() || a.Port == 0 {
		t.Errorf("Listen address = %s, want a port of 127.0.0.1", a)
	}
	port := FreePort(t)
	d := net.Dialer{Timeout: time.Second}
	if c, err := d.DialContext(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
		c.Close()
		t.Errorf("FreePort() = %d, on which something listens", port)
	}
}

// RemoveCgroup removes its directory when the test ends, and a directory
// that was never made is no failure.
func TestRemoveCgroup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ceiling-test-group")
	t.Run("made", func(t *testing.T) {
		RemoveCgroup(t, dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after the test, stat %s = %v, want not exist", dir, err)
	}
	t.Run("never made", func(t *testing.T) { RemoveCgroup(t, dir+"-never") })
}

func TestServeTCP(t *testing.T) {
	ln := ServeTCP(t, func(c net.Conn) { c.Write([]byte("hi")); c.Close() })
	c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); string(b) != "hi" || err != nil {
		t.Errorf("read %q, %v; want \"hi\"", b, err)
	}
}
