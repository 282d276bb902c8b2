package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The open model makes a user for each arrival that finds none free, up
// to rate × timeout; past its memory budget it makes no more: its late
// arrivals wait for a user to come free, and the step says so
// (MemoryLimited, with the heap), instead of growing. A budget it stays
// under changes nothing.
func TestOpenModelMemoryBudget(t *testing.T) {
	for _, tt := range []struct {
		name    string
		budget  int64
		limited bool
	}{{"past the budget", 1, true}, {"under it", 1 << 40, false}} {
		synctest.Test(t, func(t *testing.T) {
			x := &slowExchanger{delay: 500 * time.Millisecond} // 1000/s of half a second needs 500 users
			r := NewRunner(Config{Exchanger: x, Scenarios: oneRequest(t), Timeout: time.Second, MemoryBudget: tt.budget})
			defer r.Close()
			res := r.Run(context.Background(), Step{Rate: 1000, Length: time.Second})
			switch {
			case tt.limited && (!res.MemoryLimited || res.Workers != memoryCheckEvery-1 || res.Total.Late == 0 || res.HeapAtLimit <= tt.budget):
				t.Errorf("%s: memory limited %v, %d users, %d late, heap %d; want limited at %d users, arrivals late", tt.name, res.MemoryLimited, res.Workers, res.Total.Late, res.HeapAtLimit, memoryCheckEvery-1)
			case !tt.limited && (res.MemoryLimited || res.Workers < 400):
				t.Errorf("%s: memory limited %v, %d users; want not limited, about 500 users", tt.name, res.MemoryLimited, res.Workers)
			}
		})
	}
}
