package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The known values below come from R 4.x, wilcox.test(a, b, exact = TRUE)
// (two-sided), whose W statistic is U of a; the first case is the example
// of R's ?wilcox.test (Hollander & Wolfe, Nonparametric Statistical
// Methods, 1973, p. 69: permeability constants of the human chorioamnion),
// for which R prints W = 35, p-value = 0.1272 with alternative = "greater",
// so 0.2544 two-sided. The others are complete separations, whose exact
// two-sided p is 2 / C(n1+n2, n1): 2/252 for 5 and 5, 2/70 for 4 and 4,
// 2/20 for 3 and 3. With ties R falls back to a normal approximation, so
// the tie cases are checked against the exact permutation distribution
// (permutationP below), which is what benchstat computes.
var rankCases = []struct {
	name string
	a, b []float64
	u, p float64
}{
	{"R ?wilcox.test example",
		[]float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
		[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544122544122544},
	{"5 below 5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252},
	{"5 above 5", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252},
	{"4 below 4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
	{"3 below 3: the test cannot reach 0.05", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 2.0 / 20},
	{"20 ms vs 26 ms", []float64{20.1, 19.8, 20.4, 20.0, 20.6}, []float64{26.2, 25.9, 26.5, 26.0, 26.8}, 0, 2.0 / 252},
	{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 10, 0.6904761904761905},
	{"identical", []float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 4, 5}, 12.5, 1},
	{"ties", []float64{1, 2, 2, 3, 4}, []float64{2, 3, 5, 6, 6}, 4.5, 30.0 / 252},
	{"all equal", []float64{0, 0, 0, 0, 0}, []float64{0, 0, 0, 0, 0}, 12.5, 1},
}

func TestRankTest(t *testing.T) {
	for _, tt := range rankCases {
		t.Run(tt.name, func(t *testing.T) {
			if u := uStatistic(tt.a, tt.b); u != tt.u {
				t.Errorf("uStatistic(%v, %v) = %v, want %v", tt.a, tt.b, u, tt.u)
			}
			if u := uStatistic(tt.b, tt.a); u != float64(len(tt.a)*len(tt.b))-tt.u {
				t.Errorf("uStatistic(b, a) = %v, want n1·n2 − %v", u, tt.u)
			}
			a := slices.Clone(tt.a)
			p, u := rankTest(a, tt.b)
			if math.Abs(p-tt.p) > 1e-9 || u != tt.u {
				t.Errorf("rankTest(%v, %v) = p %v, U %v; want %v, %v", tt.a, tt.b, p, u, tt.p, tt.u)
			}
			if !slices.Equal(a, tt.a) {
				t.Errorf("rankTest sorted its argument: %v", a)
			}
			if exact := permutationP(tt.a, tt.b); math.Abs(exact-tt.p) > 1e-9 {
				t.Errorf("permutationP = %v, the table says %v: the table is wrong", exact, tt.p)
			}
		})
	}
}

// TestRankTestMatchesPermutations checks benchmath's p-values against the
// exact permutation distribution of U on random samples without ties.
// (With ties benchmath doubles the smaller tail of U as if its distribution
// were symmetric, which a tie pattern can break: its p then differs a
// little from the exact one, as benchstat's does; rankTest caps it at 1.
// Latencies and rates of repeats are real numbers and rarely tie.)
func TestRankTestMatchesPermutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		n1, n2 := 2+rng.IntN(6), 2+rng.IntN(6)
		pool := rng.Perm(n1 + n2)
		a, b := make([]float64, n1), make([]float64, n2)
		for j := range a {
			a[j] = float64(pool[j]) + 0.5*float64(rng.IntN(2)) // shifted a little at random
		}
		for j := range b {
			b[j] = float64(pool[n1+j])
		}
		p, _ := rankTest(a, b)
		if want := permutationP(a, b); math.Abs(p-want) > 1e-9 {
			t.Errorf("rankTest(%v, %v) p = %v, want %v (exact permutation)", a, b, p, want)
		}
	}
	p, _ := rankTest([]float64{5, 1, 1, 3}, []float64{2, 3})
	if p > 1 {
		t.Errorf("rankTest with ties p = %v, want at most 1", p)
	}
}

// permutationP is the exact two-sided p-value of U as R's wilcox.test
// defines it: over every way to split the pooled values into groups of
// len(a) and len(b), the share whose U is at most the observed one, or at
// least it, whichever is smaller, doubled, and at most 1. (Without ties U
// is symmetric about n1·n2/2 and this is the share at least as far from
// it; with ties it need not be.)
func permutationP(a, b []float64) float64 {
	pool := append(slices.Clone(a), b...)
	n1, n := len(a), len(pool)
	obs := uStatistic(a, b)
	var below, above, all int
	for mask := range 1 << n {
		if popcount(mask) != n1 {
			continue
		}
		var x, y []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		all++
		u := uStatistic(x, y)
		if u <= obs+1e-9 {
			below++
		}
		if u >= obs-1e-9 {
			above++
		}
	}
	return min(1, 2*float64(min(below, above))/float64(all))
}

func popcount(m int) int {
	c := 0
	for ; m > 0; m &= m - 1 {
		c++
	}
	return c
}

// The rank-sum U is the pair count's, ties and all, for samples of every
// size up to a few dozen.
func TestUStatisticFromRanks(t *testing.T) {
	pairs := func(a, b []float64) float64 {
		var u float64
		for _, x := range a {
			for _, y := range b {
				switch {
				case x > y:
					u++
				case x == y:
					u += 0.5
				}
			}
		}
		return u
	}
	rng := rand.New(rand.NewPCG(7, 9))
	for range 500 {
		a, b := make([]float64, 1+rng.IntN(30)), make([]float64, 1+rng.IntN(30))
		for i := range a {
			a[i] = float64(rng.IntN(8)) // few values: many ties
		}
		for i := range b {
			b[i] = float64(rng.IntN(8))
		}
		if got, want := uStatistic(a, b), pairs(a, b); got != want {
			t.Fatalf("uStatistic(%v, %v) = %v, want %v (the pairs counted)", a, b, got, want)
		}
	}
}

// BenchmarkUStatistic measures U for many repeats a side (a hostile result
// file's; results.Read refuses more than a plan's 100): from ranks it is
// milliseconds, where counting pairs took a second.
func BenchmarkUStatistic(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, 30000), make([]float64, 30000)
	for i := range x {
		x[i], y[i] = rng.Float64(), rng.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		uStatistic(x, y)
	}
}
