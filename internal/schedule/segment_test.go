package schedule

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The segments of a timetable, put together, are the timetable: every
// arrival exactly once, at its own offset, for uniform and Poisson
// arrivals alike; and the users' shares sum to the whole.
func TestSegmentsMakeTheWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 7).Draw(t, "n")
		rate := rapid.Float64Range(1, 500).Draw(t, "rate")
		length := time.Duration(rapid.Int64Range(1, 3000).Draw(t, "ms")) * time.Millisecond
		seed := rapid.Uint64().Draw(t, "seed")
		shape := Sequence{Constant{Rate: rate / 2, Len: length / 3}, Linear{From: rate / 2, To: rate, Len: length}}
		for _, whole := range []func() Schedule{
			func() Schedule { return Uniform{Shape: shape} },
			func() Schedule { return NewPoisson(shape, seed) },
		} {
			var want, got []time.Duration
			for i := int64(0); ; i++ {
				off, ok := whole().Offset(i)
				if !ok {
					break
				}
				want = append(want, off)
			}
			for k := range n {
				seg := Segment{I: k, N: n}.Of(whole())
				for j := int64(0); ; j++ {
					off, ok := seg.Offset(j)
					if !ok {
						break
					}
					got = append(got, off)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d segments gave %d arrivals, the whole has %d (or their offsets differ)", n, len(got), len(want))
			}
		}
		users := rapid.IntRange(0, 1000).Draw(t, "users")
		sum := 0
		for k := range n {
			sum += Segment{I: k, N: n}.Users(users)
		}
		if sum != users {
			t.Fatalf("users' shares sum to %d, want %d", sum, users)
		}
	})
}

func TestParseSegment(t *testing.T) {
	if s, err := ParseSegment("2/3"); err != nil || s != (Segment{I: 1, N: 3}) || s.String() != "2/3" {
		t.Errorf("ParseSegment(2/3) = %+v, %v", s, err)
	}
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0", "-1/2"} {
		if _, err := ParseSegment(bad); err == nil {
			t.Errorf("ParseSegment(%q) accepted", bad)
		}
	}
}
