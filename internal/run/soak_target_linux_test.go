//go:build linux

package run

import (
	"bytes"
	"net"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// soakTargetEnv makes the test binary, started again, a target of the
// soak's tests, serving HTTP on soakAddrEnv's address (serveFlat): "leak" holds two
// more MiB of memory every second; "restart" holds 24 MiB and, the first
// time it runs (no file at soakMarkEnv yet), makes that file and exits
// after soakAfterEnv, for its shell to start it again. Built with the
// race detector, a target's own memory grows 20-35 MB an hour in its
// first minutes whatever it serves (0.6-0.9 MB over TestSoakRestartOnce's
// 90 s, measured in four runs): 24 MiB of working set, as a service
// holds, keep that under the 2 % of its size below which a trend's
// movement is STABLE, where 8 MiB left it at the edge (2.1 % once).
const (
	soakTargetEnv = "RUN_TEST_SOAK"
	soakAddrEnv   = "RUN_TEST_SOAK_ADDR"
	soakMarkEnv   = "RUN_TEST_SOAK_MARK"
	soakAfterEnv  = "RUN_TEST_SOAK_AFTER"
)

// soakChild runs the test binary as a soak's target when it was started
// as one, and says whether it was.
func soakChild() bool {
	mode := os.Getenv(soakTargetEnv)
	if mode == "" {
		return false
	}
	soakTarget(mode)
	return true
}

func soakTarget(mode string) {
	testkit.ExitWithOwner()
	// MAP_POPULATE faults the pages in without Go code touching them: a
	// race-enabled build holds no shadow memory for them.
	hold := func(mib int) []byte {
		b, err := syscall.Mmap(-1, 0, mib<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_POPULATE)
		if err != nil {
			os.Exit(3)
		}
		return b
	}
	// A collection a second, its memory handed back: the target's own
	// garbage (a connection accepted, a timer) never piles up before the
	// runtime's first collection, at 4 MB of heap, which would read as a
	// slow leak over a test's minute.
	go func() {
		for range time.Tick(time.Second) {
			debug.FreeOSMemory()
		}
	}()
	var held [][]byte
	switch mode {
	case "leak":
		go func() {
			for range time.Tick(time.Second) {
				held = append(held, hold(2))
			}
		}()
	case "restart":
		held = append(held, hold(24))
		mark := os.Getenv(soakMarkEnv)
		if _, err := os.Stat(mark); err != nil {
			after, _ := time.ParseDuration(os.Getenv(soakAfterEnv))
			os.WriteFile(mark, []byte(time.Now().Add(after).Format(time.RFC3339Nano)), 0o644)
			time.AfterFunc(after, func() { os.Exit(0) })
		}
	}
	ln, err := net.Listen("tcp", os.Getenv(soakAddrEnv))
	if err != nil {
		println(err.Error())
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go serveFlat(c, held)
	}
}

// flatAnswer is serveFlat's answer, and headEnd the end of a request's
// head: made once, so that an answer allocates nothing.
var (
	flatAnswer = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
	headEnd    = []byte("\r\n\r\n")
)

// serveFlat answers each request on c, a GET without a body, with "ok",
// allocating nothing per request: a target whose memory does not move
// (net/http's, whose heap settles over minutes, would).
func serveFlat(c net.Conn, held [][]byte) {
	defer c.Close()
	_ = held // kept alive while the target serves
	var buf [8192]byte
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		for {
			i := bytes.Index(buf[:n], headEnd)
			if i < 0 {
				break
			}
			if _, err := c.Write(flatAnswer); err != nil {
				return
			}
			n = copy(buf[:], buf[i+4:n])
		}
		if n == len(buf) {
			return // a request larger than the buffer: not one of ceiling's
		}
	}
}
