package sink

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Latency is how long the sink waits, after reading a request, before it
// answers.
type Latency struct {
	// Fixed is the wait for every request when Percentiles is empty.
	// Zero: answer at once.
	Fixed time.Duration
	// Percentiles maps quantiles in (0, 1] to latencies, e.g.
	// {0.5: 40ms, 0.99: 200ms}. Empty: Fixed is used.
	Percentiles map[float64]time.Duration
}

// point is one knot of the inverse cumulative distribution.
type point struct {
	q float64
	d time.Duration
}

// curve is a piecewise-linear inverse CDF: a draw of u uniform in [0, 1)
// returns the latency whose quantile is u.
type curve []point

// validate reports every problem with l, naming the offending field.
func (l Latency) validate() error {
	var errs []error
	if l.Fixed < 0 {
		errs = append(errs, fmt.Errorf("latency.fixed: %v is negative", l.Fixed))
	}
	c := l.curve()
	for i, p := range c {
		if math.IsNaN(p.q) || p.q <= 0 || p.q > 1 {
			errs = append(errs, fmt.Errorf("latency.percentiles: quantile %v is outside (0, 1]", p.q))
		}
		if p.d < 0 {
			errs = append(errs, fmt.Errorf("latency.percentiles[%v]: %v is negative", p.q, p.d))
		}
		if i > 0 && p.d < c[i-1].d {
			errs = append(errs, fmt.Errorf("latency.percentiles[%v]: %v is below the lower quantile %v's %v",
				p.q, p.d, c[i-1].q, c[i-1].d))
		}
	}
	return errors.Join(errs...)
}

// curve returns the given percentiles sorted by quantile, without the
// implicit end points.
func (l Latency) curve() curve {
	c := make(curve, 0, len(l.Percentiles))
	for q, d := range l.Percentiles {
		c = append(c, point{q, d})
	}
	slices.SortFunc(c, func(a, b point) int {
		switch {
		case a.q < b.q:
			return -1
		case a.q > b.q:
			return 1
		}
		return 0
	})
	return c
}

// sampler draws latencies; built once at Start from a validated Latency.
type sampler struct {
	fixed time.Duration
	knots curve // (0, 0), the percentiles, (1, last); empty for fixed
}

func newSampler(l Latency) sampler {
	c := l.curve()
	if len(c) == 0 {
		return sampler{fixed: l.Fixed}
	}
	knots := make(curve, 0, len(c)+2)
	knots = append(knots, point{0, 0})
	knots = append(knots, c...)
	if last := c[len(c)-1]; last.q < 1 {
		knots = append(knots, point{1, last.d})
	}
	return sampler{knots: knots}
}

// draw maps u, uniform in [0, 1), to a latency. With knots (q_i, d_i) and
// q_i <= u <= q_{i+1}, it returns
//
//	d_i + (u − q_i) / (q_{i+1} − q_i) × (d_{i+1} − d_i)
//
// the inverse of the piecewise-linear CDF through the knots, so a share q_i
// of the draws falls at or below d_i: p50 and p99 of the draws are the
// configured p50 and p99. Above the last given quantile the latency stays
// at its value (no tail beyond what was asked for).
func (s sampler) draw(u float64) time.Duration {
	if len(s.knots) == 0 {
		return s.fixed
	}
	for i := 1; i < len(s.knots); i++ {
		hi := s.knots[i]
		if u > hi.q {
			continue
		}
		lo := s.knots[i-1]
		if hi.q == lo.q {
			return hi.d
		}
		f := (u - lo.q) / (hi.q - lo.q)
		return lo.d + time.Duration(f*float64(hi.d-lo.d))
	}
	return s.knots[len(s.knots)-1].d
}

// golden is the SplitMix64 increment: 2^64 divided by the golden ratio.
const golden = 0x9E3779B97F4A7C15

// splitmix returns the n-th output of the SplitMix64 stream seeded with
// seed (Steele, Lea, Flood 2014). Each output depends only on seed and n,
// so concurrent requests draw without sharing a generator.
func splitmix(seed, n uint64) uint64 {
	z := seed + (n+1)*golden
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniform maps 64 random bits to a float64 uniform in [0, 1), using the top
// 53 bits (the float64 mantissa).
func uniform(x uint64) float64 {
	return float64(x>>11) / (1 << 53)
}

// draws returns the two uniforms of request n: one for its latency, one
// for its error draw.
func draws(seed, n uint64) (lat, fail float64) {
	return uniform(splitmix(seed, 2*n)), uniform(splitmix(seed, 2*n+1))
}
