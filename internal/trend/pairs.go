package trend

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// A fit's pairwise slopes are n(n−1)/2 for n points: 115,000 for a soak's
// 480 windows, 0.9 MB if held. A soak fits each of its figures again
// after every window, so a fit that held them grew ceiling's memory with
// the square of the windows, the drift a soak of ceiling itself must not
// show. pairs holds at most keptSlopes of them: it finds the slope at a
// rank by going through the pairs again, narrowing the range the rank
// lies in with pivots taken from a uniform sample of the slopes, until
// the range holds few enough to keep (Floyd and Rivest's selection,
// with the slopes made again at each pass rather than stored). A fit of
// up to about 128 points keeps every slope in one pass, as before; one
// of 480 finds the six ranks it needs in four passes, and takes about
// 4 ms where holding its slopes took 2.4 (BenchmarkFit480). The value at
// each rank is the one sorting every slope would give, exactly. Its
// buffers take 112 KB, whatever the points.
const (
	keptSlopes  = 8192
	sampleSlots = 2048
)

// pairs are a fit's pairwise slopes, made again as often as a rank is
// sought. Only pairs with different x (and, with segments, in the same
// segment) give a slope. A pairs is reused from fit to fit (pairPool): its
// buffers have a fixed size.
type pairs struct {
	x, y  []float64
	seg   []int
	total int // the slopes, counted by start

	// kept holds the slopes in the middle range of the last pass, up to
	// its capacity; sample a uniform sample of them (reservoir
	// sampling), first the first pass's, pivots a sorted copy of a
	// sample.
	kept, sample, first, pivots []float64
	// keptBelow counts the slopes under those kept and keptN the kept,
	// when kept holds every slope of its range (keptN −1 when not): all
	// of them after start when they fit, and the rank next to one just
	// found is often among them.
	keptBelow, keptN int
	passes           int // passes made since start
	src              rand.PCG
	rnd              *rand.Rand
}

var pairPool = sync.Pool{New: func() any {
	p := &pairs{kept: make([]float64, 0, keptSlopes), sample: make([]float64, 0, sampleSlots),
		first: make([]float64, 0, sampleSlots), pivots: make([]float64, 0, sampleSlots)}
	p.rnd = rand.New(&p.src)
	return p
}}

// start takes the points and goes through their pairs once: it counts the
// slopes, keeps them when they fit, and samples them.
func (p *pairs) start(x, y []float64, seg []int) {
	p.x, p.y, p.seg = x, y, seg
	p.src.Seed(1, 2) // the same passes for the same points
	inf := math.Inf(1)
	p.passes = 0
	c := p.pass(-inf, inf, 0, 0, false)
	p.total = c[2]
	p.keptBelow, p.keptN = 0, -1
	if p.total <= cap(p.kept) {
		p.keptN = p.total
	}
	p.first = append(p.first[:0], p.sample...)
}

// at returns the slope at index k of the slopes sorted (0 ≤ k < total).
func (p *pairs) at(k int) float64 {
	if k >= p.keptBelow && k < p.keptBelow+p.keptN {
		return nth(p.kept[:p.keptN], k-p.keptBelow)
	}
	// The slope sought lies in [lo, hi]; below counts the slopes under
	// lo, m those in the range, and sample is a sample of those.
	lo, hi, below, m := math.Inf(-1), math.Inf(1), 0, p.total
	sample := p.first
	for {
		r := k - below
		if sample == nil {
			c := p.pass(lo, hi, 0, 0, false)
			if c[2] <= cap(p.kept) {
				p.keptBelow, p.keptN = below, c[2]
				return nth(p.kept, r)
			}
			m, sample = c[2], p.sample
		}
		a, b := p.pivot(sample, r, m)
		c := p.pass(lo, hi, a, b, true)
		switch {
		case r < c[0]: // under a
			hi, m, sample = math.Nextafter(a, math.Inf(-1)), c[0], nil
		case r < c[0]+c[1]:
			return a
		case r < c[0]+c[1]+c[2]: // between a and b
			below += c[0] + c[1]
			if c[2] <= cap(p.kept) {
				p.keptBelow, p.keptN = below, c[2]
				return nth(p.kept, r-c[0]-c[1])
			}
			lo, hi, m, sample = math.Nextafter(a, math.Inf(1)), math.Nextafter(b, math.Inf(-1)), c[2], p.sample
		case r < c[0]+c[1]+c[2]+c[3]:
			return b
		default: // over b
			below += c[0] + c[1] + c[2] + c[3]
			lo, m, sample = math.Nextafter(b, math.Inf(1)), c[4], nil
		}
	}
}

// pivot picks, from a sample of the m slopes of a range, two that
// bracket the one at index r of them with a margin of 2.5 standard
// deviations of the sample's own rank: the range between them most
// likely holds it and few others.
func (p *pairs) pivot(sample []float64, r, m int) (a, b float64) {
	p.pivots = append(p.pivots[:0], sample...)
	slices.Sort(p.pivots)
	n := float64(len(p.pivots))
	f := (float64(r) + 0.5) / float64(m)
	at := f * n
	d := 2.5*math.Sqrt(n*f*(1-f)) + 1
	ia := min(max(int(math.Floor(at-d)), 0), len(p.pivots)-1)
	ib := min(max(int(math.Ceil(at+d)), 0), len(p.pivots)-1)
	return p.pivots[ia], p.pivots[ib]
}

// pass goes through the pairs once and counts the slopes within [lo, hi]
// by where they fall against pivots a ≤ b: c[0] under a, c[1] at a, c[2]
// between them, c[3] at b, c[4] over b; without pivots every slope in the
// range is in c[2]. It keeps those of c[2] up to kept's capacity, and
// samples them uniformly.
func (p *pairs) pass(lo, hi, a, b float64, split bool) (c [5]int) {
	p.passes++
	p.kept, p.sample, p.keptN = p.kept[:0], p.sample[:0], -1
	x, y, seg := p.x, p.y, p.seg
	w, next := 0.0, 0 // the sample's weight and next replacement (skip)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx := x[j] - x[i]
			if dx == 0 || (seg != nil && seg[i] != seg[j]) {
				continue
			}
			s := (y[j] - y[i]) / dx
			if s < lo || s > hi {
				continue
			}
			if split {
				switch {
				case s < a:
					c[0]++
					continue
				case s == a:
					c[1]++
					continue
				case s == b:
					c[3]++
					continue
				case s > b:
					c[4]++
					continue
				}
			}
			c[2]++
			if len(p.kept) < cap(p.kept) {
				p.kept = append(p.kept, s)
			}
			if len(p.sample) < cap(p.sample) {
				p.sample = append(p.sample, s)
				if len(p.sample) == cap(p.sample) {
					w, next = p.skip(1, c[2])
				}
			} else if c[2] == next {
				p.sample[p.rnd.IntN(len(p.sample))] = s
				w, next = p.skip(w, c[2])
			}
		}
	}
	return c
}

// skip is reservoir sampling's next replacement once the sample is full
// (Li's algorithm L): the count at which the next slope takes a slot,
// and the weight w after it; the slopes between are skipped without a
// random draw each.
func (p *pairs) skip(w float64, count int) (float64, int) {
	k := float64(cap(p.sample))
	w *= math.Exp(math.Log(1-p.rnd.Float64()) / k)
	gap := math.Floor(math.Log(1-p.rnd.Float64()) / math.Log1p(-w))
	if gap > 1<<40 || math.IsNaN(gap) {
		return w, math.MaxInt
	}
	return w, count + int(gap) + 1
}
