package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Segment is share I of N (0 ≤ I < N) of a load split over N generators.
// In the open model it takes every N-th arrival of the whole timetable,
// starting at arrival I: arrival j of segment I is arrival j·N + I of the
// whole. The N segments' arrivals are the whole's, each exactly once, at
// the whole's intended offsets, so the merged schedule is the one a single
// generator would have run. In the closed model it takes its Users share.
// The zero value (N = 0) is the whole load.
type Segment struct {
	I, N int
}

// Whole reports whether s is the whole load (no split).
func (s Segment) Whole() bool { return s.N <= 1 }

// Of returns the arrivals of sched that belong to s: Offset(j) is
// sched.Offset(j·N + I).
func (s Segment) Of(sched Schedule) Schedule {
	if s.Whole() {
		return sched
	}
	return striped{sched, int64(s.I), int64(s.N)}
}

// Users returns s's share of n users: n ÷ N, and one more for the first
// n mod N segments, so that the shares sum to n.
func (s Segment) Users(n int) int {
	if s.Whole() {
		return n
	}
	share := n / s.N
	if s.I < n%s.N {
		share++
	}
	return share
}

// Fraction is s's share of the rate: 1/N (1 for the whole).
func (s Segment) Fraction() float64 {
	if s.Whole() {
		return 1
	}
	return 1 / float64(s.N)
}

// String writes s as --segment takes it: "2/3" (from 1), or "" whole.
func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I+1, s.N)
}

// ParseSegment reads --segment "i/N": share i (from 1) of N.
func ParseSegment(text string) (Segment, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n || n > 10000 {
		return Segment{}, fmt.Errorf("segment %q: want i/N, share i (1 to N) of N, such as 2/3", text)
	}
	return Segment{I: i - 1, N: n}, nil
}

// striped is a Segment of a schedule.
type striped struct {
	whole Schedule
	i, n  int64
}

func (s striped) Offset(j int64) (time.Duration, bool) {
	if j < 0 {
		return 0, false
	}
	return s.whole.Offset(j*s.n + s.i)
}
