package httpx

import (
	"errors"
	"sync/atomic"
)

// A response body is kept only when its request Captures it (a check, an
// extraction), up to Config.MaxBodyBytes each. What every exchange in
// flight keeps at once is bounded too, for the process: a target that
// answers with an endless body holds MaxBodyBytes per exchange for as
// long as the timeout, and 20 such a second would otherwise take
// gigabytes. An exchange whose body would pass the budget fails in
// ceiling itself (transport.Generator): its body could not be examined,
// which is ceiling's limit, not the target's.

// DefaultKeptBudget is the most response-body bytes the process keeps at
// once for the exchanges in flight.
const DefaultKeptBudget = 256 << 20

// keptShrinkAbove is the largest kept-body buffer a session or connection
// holds on to for its next response: a larger one is let go once its
// exchange is over.
const keptShrinkAbove = 1 << 20

// errKeptBudget is a body that would take the bodies kept past the budget.
var errKeptBudget = errors.New("the response bodies kept for checks reached ceiling's budget")

// keptBodies counts the kept bytes of the exchanges in flight.
type keptBodies struct {
	limit atomic.Int64
	used  atomic.Int64
}

var kept = func() *keptBodies {
	k := &keptBodies{}
	k.limit.Store(DefaultKeptBudget)
	return k
}()

// take reserves n more kept bytes, or says the budget has no room.
func (k *keptBodies) take(n int64) bool {
	if k.used.Add(n) > k.limit.Load() {
		k.used.Add(-n)
		return false
	}
	return true
}

// give returns n kept bytes to the budget.
func (k *keptBodies) give(n int64) { k.used.Add(-n) }

// keep appends b to body under the budget, counting it into *reserved.
func keep(body []byte, b []byte, reserved *int64) ([]byte, error) {
	if !kept.take(int64(len(b))) {
		return body, errKeptBudget
	}
	*reserved += int64(len(b))
	return append(body, b...), nil
}

// release gives back what an exchange kept and lets go of a buffer too
// large to hold on to; the caller's copy of the slice (Outcome.Body) stays
// valid.
func release(body []byte, reserved *int64) []byte {
	kept.give(*reserved)
	*reserved = 0
	if cap(body) > keptShrinkAbove {
		return nil
	}
	return body
}
