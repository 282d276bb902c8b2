//go:build !linux

package sweep

import (
	"errors"
	"fmt"
)

// NewLimits needs cgroups, which only Linux has: elsewhere it returns an
// error matching ErrNoController and errors.ErrUnsupported, so that the
// local launcher runs the target without limits.
func NewLimits(name string, c Config) (*Limits, error) {
	return nil, fmt.Errorf("cgroup limits for %s: %w", c.Name(), notLinux{})
}

// notLinux is NewLimits' error on systems other than Linux.
type notLinux struct{}

func (notLinux) Error() string {
	return "cgroup limits need Linux; the local launcher runs without them elsewhere"
}

// Is matches ErrNoController and errors.ErrUnsupported.
func (notLinux) Is(target error) bool {
	return target == ErrNoController || target == errors.ErrUnsupported
}

// MemoryEvents needs cgroups: no group was created.
func (l *Limits) MemoryEvents() (MemoryEvents, error) {
	return MemoryEvents{}, notLinux{}
}

// Remove does nothing: no group was created.
func (l *Limits) Remove() error { return nil }

// pin does nothing off Linux: neither cgroups nor affinity are used.
func pin(float64) (prefix string, pinned float64, why string) {
	return "", 0, "CPU and memory not enforced (limits need Linux)"
}

// RemoveStale does nothing: without cgroups no group was left behind.
func RemoveStale() ([]string, error) { return nil, nil }
