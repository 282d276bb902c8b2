package run

import "time"

// spinEnv makes the test binary, started again, burn one core until it is
// killed, or for a minute at most.
const spinEnv = "RUN_TEST_SPIN"

var spinSink uint64

func spin() {
	end := time.Now().Add(time.Minute)
	for time.Now().Before(end) {
		for range 1 << 20 {
			spinSink++
		}
	}
}
