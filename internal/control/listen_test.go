//go:build linux

package control

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/monitor"
)

// A second copy of a server, started while a first one answers on the
// same port (SO_REUSEPORT): the ready URL answers at once, from the first
// copy, while the second does not listen yet; WaitListening waits until
// the second one's own socket listens, and ListeningPorts tells the two
// apart.
func TestWaitListeningTellsCopiesApart(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	old, err := listenReuse(addr, true) // the first copy: this test process
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "old") })}
	go srv.Serve(old)
	t.Cleanup(func() { srv.Close() })

	const delay = 700 * time.Millisecond
	start := time.Now()
	tg := launch(t, LaunchConfig{
		Command: shellQuote(testBinary(t)),
		Env:     []string{helperEnv + "=serve", "CONTROL_TEST_ADDR=" + addr, "CONTROL_TEST_DELAY=" + delay.String(), "CONTROL_TEST_REUSE=1"},
		Ready:   "http://" + addr + "/", ReadyTimeout: 5 * time.Second,
	})
	ready := time.Since(start)
	held, err := monitor.ListeningPorts(tg.PID())
	t.Logf("Launch returned after %v; the new copy then listened on %v", ready, held)
	if err != nil || slices.Contains(held, port) {
		t.Fatalf("monitor.ListeningPorts(new copy) = %v, %v right after Launch; want no port %d yet (it listens after %v)", held, err, port, delay)
	}
	if mine, err := monitor.ListeningPorts(os.Getpid()); err != nil || !slices.Contains(mine, port) {
		t.Errorf("monitor.ListeningPorts(this process) = %v, %v; want its own port %d", mine, err, port)
	}

	if err := tg.WaitListening(context.Background(), []int{port}, 5*time.Second); err != nil {
		t.Fatalf("WaitListening(%d) = %v", port, err)
	}
	took := time.Since(start)
	t.Logf("WaitListening returned %v after the launch", took)
	if took < delay || took > delay+2*time.Second {
		t.Errorf("WaitListening returned %v after the launch, want after the copy's %v delay (and within 2 s of it)", took, delay)
	}
	if held, err := monitor.ListeningPorts(tg.PID()); err != nil || !slices.Contains(held, port) {
		t.Errorf("monitor.ListeningPorts(new copy) = %v, %v after WaitListening; want %d", held, err, port)
	}

	other := port + 1
	err = tg.WaitListening(context.Background(), []int{port, other}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(other)) || !strings.Contains(err.Error(), "within 200ms") {
		t.Errorf("WaitListening(%d, %d) = %v; want a timeout that names port %d", port, other, err, other)
	}
}

// A target that exits before it listens ends the wait at once, saying so.
func TestWaitListeningTargetExits(t *testing.T) {
	t.Parallel()
	tg := launch(t, LaunchConfig{Command: "sleep 0.2"})
	start := time.Now()
	err := tg.WaitListening(context.Background(), []int{1}, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited") || time.Since(start) > 3*time.Second {
		t.Errorf("WaitListening on a target that exits = %v after %v; want an error saying it exited, soon", err, time.Since(start))
	}
}
