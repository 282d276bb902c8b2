package schedule

import (
	"math/rand/v2"
	"time"
)

// Schedule maps an arrival index to its intended offset.
type Schedule interface {
	// Offset returns the intended offset of arrival i (counting from 0) from
	// the start of the schedule, and false once i is past its end.
	Offset(i int64) (time.Duration, bool)
}

// Uniform spaces arrivals evenly in expected count: arrival i is due when i
// arrivals are expected, so at a constant rate r the gap is exactly 1/r.
type Uniform struct {
	// Shape is the rate profile.
	Shape Shape
}

// Offset returns Shape.At(i) while i < Shape.Total().
func (u Uniform) Offset(i int64) (time.Duration, bool) {
	n := float64(i)
	if i < 0 || n >= u.Shape.Total() {
		return 0, false
	}
	return u.Shape.At(n), true
}

// Poisson draws arrivals of an inhomogeneous Poisson process with the
// shape's rate: arrival i is due at At(S) where S is the sum of i+1 draws
// from Exp(1). The draws come from a PCG seeded with Seed, so the timetable
// is a deterministic function of (shape, seed, i).
type Poisson struct {
	shape Shape
	seed  uint64
	rng   *rand.Rand
	next  int64   // index the cursor stands before
	sum   float64 // Exp(1) draws summed for indices < next
}

// NewPoisson returns a Poisson schedule over shape.
func NewPoisson(shape Shape, seed uint64) *Poisson {
	p := &Poisson{shape: shape, seed: seed}
	p.rewind()
	return p
}

func (p *Poisson) rewind() {
	p.rng = rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15))
	p.next, p.sum = 0, 0
}

// Offset returns the intended offset of arrival i. Sequential calls cost
// O(1); going backwards replays the draws from the start.
func (p *Poisson) Offset(i int64) (time.Duration, bool) {
	if i < 0 {
		return 0, false
	}
	if i < p.next {
		p.rewind()
	}
	total := p.shape.Total()
	for p.next <= i {
		p.sum += p.rng.ExpFloat64()
		p.next++
		if p.sum >= total {
			p.sum = total // stays past the end for every later index
			return 0, false
		}
	}
	return p.shape.At(p.sum), true
}

var (
	_ Schedule = Uniform{}
	_ Schedule = (*Poisson)(nil)
	_ Shape    = Constant{}
	_ Shape    = Linear{}
	_ Shape    = Sequence{}
)
