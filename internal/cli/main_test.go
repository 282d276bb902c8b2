package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// asCeiling makes the test binary act as ceiling itself when set in its
// environment: `ceiling demo` starts the demo target by running its own
// executable, which under `go test` is this binary.
const asCeiling = "CEILING_TEST_AS_CEILING"

func TestMain(m *testing.M) {
	if os.Getenv(asCeiling) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(int(code))
	}
	os.Exit(m.Run())
}
