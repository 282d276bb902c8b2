// Command wsfloor is the least a Go program can do to pace WebSocket frames
// and read their acks: the floor ceiling's own cost is compared with in
// bench/ws.sh, measured on the same machine in the same run.
//
// It opens -conns sockets with gorilla/websocket (the library ceiling uses,
// with the same 512-byte read buffer), sends -rate frames a second for
// -warmup + -duration from one pacing goroutine with one reused Go timer
// (ceiling's open-model scheduler does the same), spreading them over the
// sockets in turn, and reads every socket on its own goroutine, counting the
// frames that come back. It measures nothing per frame: no ack matching, no
// latency, no histograms. Whatever ceiling spends above this is ceiling's
// own work; whatever both spend is the kernel's and the Go runtime's price
// of sending paced frames on this machine.
//
// Bench-only code: it is not part of the ceiling binary.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	url := flag.String("url", "ws://127.0.0.1:8080/widget", "websocket URL (loopback)")
	conns := flag.Int("conns", 100, "sockets to spread frames over")
	rate := flag.Float64("rate", 20000, "frames per second")
	duration := flag.Duration("duration", 10*time.Second, "counted time")
	warmup := flag.Duration("warmup", time.Second, "time before the counted part")
	flag.Parse()
	if err := run(*url, *conns, *rate, *warmup+*duration); err != nil {
		fmt.Fprintln(os.Stderr, "wsfloor:", err)
		os.Exit(1)
	}
}

func run(url string, conns int, rate float64, length time.Duration) error {
	d := websocket.Dialer{ReadBufferSize: 512, WriteBufferSize: 512, HandshakeTimeout: 5 * time.Second}
	socks := make([]*websocket.Conn, conns)
	for i := range socks {
		c, _, err := d.Dial(url, nil)
		if err != nil {
			return fmt.Errorf("dial %s: %w", url, err)
		}
		socks[i] = c
	}
	var acks atomic.Int64
	var wg sync.WaitGroup
	for _, c := range socks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, r, err := c.NextReader()
				if err != nil {
					return
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					return
				}
				acks.Add(1)
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / rate)
	n := int64(length / interval)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	buf := make([]byte, 0, 128)
	start := time.Now()
	for i := range n {
		if wait := time.Duration(i)*interval - time.Since(start); wait > 0 {
			timer.Reset(wait)
			<-timer.C
		}
		buf = append(strconv.AppendInt(append(buf[:0], `{"type":"message","clientId":"`...), i, 10), `","text":"hi"}`...)
		if err := socks[i%int64(conns)].WriteMessage(websocket.TextMessage, buf); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for acks.Load() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range socks {
		c.Close()
	}
	wg.Wait()
	fmt.Printf("sent %d acked %d in %.2f s\n", n, acks.Load(), time.Since(start).Seconds())
	return nil
}
