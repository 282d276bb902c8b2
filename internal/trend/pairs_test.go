package trend

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// The slope at every rank sought is the one sorting every slope gives,
// exactly: for series that keep every slope in one pass and for those
// that take several (up to 480 points, 115,000 slopes), with ties
// (a handful of distinct values, a flat series whose slopes are all 0),
// points at the same x, and segments.
func TestPairsAtRank(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		name string
		n    int
		y    func(i int) float64
		x    func(i int) float64
		seg  func(i int) int
	}{
		{"noise, kept whole", 100, func(int) float64 { return rnd.NormFloat64() }, nil, nil},
		{"noise on a line", 480, func(i int) float64 { return 0.3*float64(i) + rnd.NormFloat64()*20 }, nil, nil},
		{"seven values", 300, func(i int) float64 { return float64(i % 7) }, nil, nil},
		{"flat", 200, func(int) float64 { return 5 }, nil, nil},
		{"same x in threes", 400, func(int) float64 { return rnd.Float64() }, func(i int) float64 { return float64(i / 3) }, nil},
		{"segments", 450, func(i int) float64 { return float64(i%150) + rnd.NormFloat64() }, nil, func(i int) int { return i / 150 }},
	}
	for _, c := range cases {
		x, y := make([]float64, c.n), make([]float64, c.n)
		var seg []int
		if c.seg != nil {
			seg = make([]int, c.n)
		}
		for i := range c.n {
			x[i], y[i] = float64(i), c.y(i)
			if c.x != nil {
				x[i] = c.x(i)
			}
			if seg != nil {
				seg[i] = c.seg(i)
			}
		}
		var all []float64
		for i := range c.n {
			for j := i + 1; j < c.n; j++ {
				if dx := x[j] - x[i]; dx != 0 && (seg == nil || seg[i] == seg[j]) {
					all = append(all, (y[j]-y[i])/dx)
				}
			}
		}
		slices.Sort(all)
		p := pairPool.Get().(*pairs)
		p.start(x, y, seg)
		if p.total != len(all) {
			t.Fatalf("%s: %d slopes counted, want %d", c.name, p.total, len(all))
		}
		ks := []int{0, 1, len(all) / 2, len(all)/2 - 1, len(all) - 1, len(all) / 40, len(all) - len(all)/40}
		for range 5 {
			ks = append(ks, rnd.IntN(len(all)))
		}
		for _, k := range ks {
			if got := p.at(k); got != all[k] {
				t.Errorf("%s: the slope at index %d of %d is %v, want %v", c.name, k, len(all), got, all[k])
			}
		}
		pairPool.Put(p)
	}
}

// A fit never holds its slopes: one of 400 points (80,000 slopes, 638 KB
// if held) and one of 1,200 (719,400 slopes, 5.8 MB) each allocate under
// 100 KB, what a few arrays of its points take (the least of three
// measures: a collection empties the pool, and a fit then makes its
// buffers again).
func TestFitMemoryIsFixed(t *testing.T) {
	per := func(n int) uint64 {
		x, y := make([]float64, n), make([]float64, n)
		for i := range n {
			x[i], y[i] = float64(i), float64(i%7)+0.01*float64(i)
		}
		Line(x, y)
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 5 {
				Line(x, y)
			}
			runtime.ReadMemStats(&after)
			least = min(least, (after.TotalAlloc-before.TotalAlloc)/5)
		}
		return least
	}
	small, large := per(400), per(1200)
	t.Logf("a fit of 400 points allocated %d bytes, one of 1,200 %d", small, large)
	if small > 100<<10 || large > 100<<10 {
		t.Errorf("fits of 400 and 1,200 points allocated %d and %d bytes: want under 100 KB whatever the points", small, large)
	}
}

// BenchmarkFit480 is a soak's fit at its bound of windows.
func BenchmarkFit480(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, 480), make([]float64, 480)
	for i := range x {
		x[i], y[i] = float64(i), 0.1*float64(i)+rnd.NormFloat64()
	}
	for b.Loop() {
		Line(x, y)
	}
}

// Finding the six ranks a fit needs (the median's two, and two for each
// end of the interval) through 480 points, 114,960 slopes, takes a few
// passes through the pairs, not one a rank and more: adjacent ranks come
// from the slopes kept for the first of them.
func TestPassesFew(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, 480), make([]float64, 480)
	for i := range x {
		x[i], y[i] = float64(i), 0.1*float64(i)+rnd.NormFloat64()
	}
	p := pairPool.Get().(*pairs)
	defer pairPool.Put(p)
	p.start(x, y, nil)
	for _, k := range []int{p.total/2 - 1, p.total / 2, 1000, 1001, p.total - 1000, p.total - 999} {
		p.at(k)
	}
	t.Logf("six ranks of %d slopes in %d passes", p.total, p.passes)
	if p.passes > 6 {
		t.Errorf("six ranks of %d slopes took %d passes through the pairs, want at most 6", p.total, p.passes)
	}
}
