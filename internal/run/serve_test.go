package run

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// serverEnv makes the test binary, started again, a target that serves
// HTTP on the address it holds and logs to the file serverLogEnv names:
// its own pid first ("pid N"), then the time of each arrival (Unix
// nanoseconds), a line each: the server's own account of what reached it.
const (
	serverEnv    = "RUN_TEST_SERVE"
	serverLogEnv = "RUN_TEST_LOG"
)

func serveAndLog(addr, logPath string) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.Exit(2)
	}
	var mu sync.Mutex
	fmt.Fprintf(f, "pid %d\n", os.Getpid())
	err = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		fmt.Fprintf(f, "%d\n", time.Now().UnixNano())
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	fmt.Fprintln(f, err)
	os.Exit(1)
}
