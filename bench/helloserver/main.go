// Command helloserver is the plainest Go HTTP server: net/http answering
// every request "ok" (200, 2 bytes), keep-alive, no logging. bench/goserver.sh
// runs it as the target whose CPU per request it measures under ceiling
// and under wrk, on the same machine in the same run.
//
// Bench-only code: it is not part of the ceiling binary.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18190", "listen address")
	flag.Parse()
	ok := []byte("ok")
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(ok) })
	if err := http.ListenAndServe(*addr, h); err != nil {
		fmt.Fprintln(os.Stderr, "helloserver:", err)
		os.Exit(1)
	}
}
