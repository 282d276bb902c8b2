//go:build !linux

package load

import "context"

// newPreciseWaker returns nil: only Linux has a precise waker here, and the
// Go timer serves elsewhere.
func newPreciseWaker(context.Context) waker { return nil }
