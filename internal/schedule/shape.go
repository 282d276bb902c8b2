package schedule

import (
	"math"
	"time"
)

// Shape is a rate profile over a finite length.
type Shape interface {
	// At returns the offset t at which the expected number of arrivals since
	// the start, ∫₀ᵗ rate, equals n. n must be within [0, Total()].
	At(n float64) time.Duration
	// Total returns the expected number of arrivals over the whole length.
	Total() float64
	// Length returns how long the shape lasts.
	Length() time.Duration
}

// Constant is a fixed rate for a fixed length.
type Constant struct {
	// Rate is in arrivals per second.
	Rate float64
	// Len is how long the rate is held.
	Len time.Duration
}

// At returns n ÷ rate.
func (c Constant) At(n float64) time.Duration {
	if c.Rate <= 0 {
		return c.Len
	}
	return seconds(n / c.Rate)
}

// Total returns rate × length.
func (c Constant) Total() float64 { return c.Rate * c.Len.Seconds() }

// Length returns Len.
func (c Constant) Length() time.Duration { return c.Len }

// Linear ramps the rate from From to To over Len.
//
// With r(t) = From + (To−From)·t/T the cumulative count is
// N(t) = From·t + a·t², a = (To−From)/(2T). Solving N(t) = n for t ≥ 0 gives
// t = 2n / (From + √(From² + 4an)), a form that stays exact when a → 0 and
// needs no special case for falling ramps.
type Linear struct {
	// From is the rate at the start, per second.
	From float64
	// To is the rate at the end, per second.
	To float64
	// Len is how long the ramp lasts.
	Len time.Duration
}

// At inverts the cumulative count.
func (l Linear) At(n float64) time.Duration {
	if n <= 0 {
		return 0
	}
	T := l.Len.Seconds()
	if T <= 0 {
		return 0
	}
	a := (l.To - l.From) / (2 * T)
	disc := l.From*l.From + 4*a*n
	if disc < 0 {
		disc = 0 // rounding past the end of a falling ramp
	}
	den := l.From + math.Sqrt(disc)
	if den <= 0 {
		return l.Len
	}
	return seconds(2 * n / den)
}

// Total returns the area under the ramp.
func (l Linear) Total() float64 { return (l.From + l.To) / 2 * l.Len.Seconds() }

// Length returns Len.
func (l Linear) Length() time.Duration { return l.Len }

// Sequence plays shapes one after the other: stairs are a Sequence of
// Constants, and a warm-up before a ramp is a Constant followed by a Linear.
type Sequence []Shape

// At finds the part that holds the n-th arrival and offsets it by the
// lengths of the parts before.
func (s Sequence) At(n float64) time.Duration {
	var before time.Duration
	for i, p := range s {
		t := p.Total()
		if n < t || i == len(s)-1 {
			return before + p.At(math.Min(n, t))
		}
		n -= t
		before += p.Length()
	}
	return before
}

// Total sums the parts.
func (s Sequence) Total() float64 {
	var t float64
	for _, p := range s {
		t += p.Total()
	}
	return t
}

// Length sums the parts.
func (s Sequence) Length() time.Duration {
	var d time.Duration
	for _, p := range s {
		d += p.Length()
	}
	return d
}

// Stairs returns a Sequence holding each rate for step.
func Stairs(rates []float64, step time.Duration) Sequence {
	s := make(Sequence, len(rates))
	for i, r := range rates {
		s[i] = Constant{Rate: r, Len: step}
	}
	return s
}

// seconds converts to a Duration, truncating so that rounding never moves an
// arrival past a later one.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}
