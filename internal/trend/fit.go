package trend

import (
	"cmp"
	"math"
	"slices"
)

// Fit is a robust line through a series: y ≈ Intercept + Slope·x.
type Fit struct {
	// Slope is the Theil–Sen slope: the median of (y_j − y_i)/(x_j − x_i)
	// over every pair i < j with x_i ≠ x_j.
	Slope float64
	// Low and High bound Slope's 95 % confidence interval (see Line);
	// −Inf and +Inf when the points are too few to bound it.
	Low, High float64
	// Intercept is the median of y_i − Slope·x_i (with Segments, over the
	// last segment's points).
	Intercept float64
	// Sigma is the points' scatter about the line: 1.4826 times the
	// median absolute residual, which is the standard deviation for
	// normal noise and is not moved by a few outliers.
	Sigma float64
	// R2 is the share of the points' variance about their mean that the
	// line accounts for, 1 − Σ(y − line)² / Σ(y − ȳ)², within [0, 1]:
	// near 1 for points on a sloping line, near 0 for noise about a flat
	// one, and 0 when every y is the same (nothing to account for).
	R2 float64
	// Rho is the lag-1 autocorrelation of the residuals in the order of
	// x (0 with fewer than MinAutoPoints points): how much each point's
	// deviation from the line carries into the next one's.
	Rho float64
	// N is the number of points fitted.
	N int
}

// MADScale makes a median absolute deviation a standard deviation for
// normal noise.
const MADScale = 1.4826

// Confidence is the confidence level of Fit.Low and Fit.High, and z95
// its two-sided normal quantile.
const (
	Confidence = 0.95
	z95        = 1.959963984540054
)

// MinAutoPoints is the fewest points whose residuals' autocorrelation
// Line measures: below it the estimate is mostly noise, and the interval
// is taken as for independent points.
const MinAutoPoints = 8

// maxRho caps the autocorrelation used to widen the interval: at 0.9
// the variance is already multiplied by 19.
const maxRho = 0.9

// Line fits y against x (the same length, at least two points with
// different x). With fewer it returns a Fit of N = len(y), zeros and an
// unbounded interval. It costs O(n²) time, and a fixed memory whatever n
// (pairs): meant for tens or hundreds of points.
//
// The slope's confidence interval is Sen's (1968): with the N pairwise
// slopes sorted, d₁ ≤ … ≤ d_N, and C = z·√Var(S), where Var(S) =
// [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18 is the variance of Kendall's S
// under no trend (t the sizes of groups of equal y), the interval runs
// from d at rank (N − C)/2 to d at rank (N + C)/2 + 1, interpolated
// between ranks. It needs no assumption on the noise's distribution,
// only that the points are independent. Readings taken one after the
// other (a process's memory, a latency) often are not: a deviation from
// the line lasts a while. So Var(S) is multiplied by (1 + ρ)/(1 − ρ),
// ρ the residuals' lag-1 autocorrelation (Rho, when positive, at most
// 0.9): the effective number of independent points is that much smaller,
// and the interval that much wider, so that a slow wander is not taken
// for a trend.
func Line(x, y []float64) Fit { return fit(x, y, nil) }

// Segments fits one slope through a series cut into segments: seg[i]
// names the segment of point i (each segment's points contiguous, in
// order). Only pairs within a segment give slopes, and each segment has
// its own intercept, so that a step from one segment to the next (a
// process restarted, its memory back to where it began) is not taken for
// a slope. Fit.Intercept is the last segment's (the line that goes on).
// Kendall's variance is the sum of the
// segments' (Hirsch's seasonal form), so the interval is Sen's as for
// Line. With one segment it is Line.
func Segments(x, y []float64, seg []int) Fit { return fit(x, y, seg) }

// fit is Line (seg nil) and Segments.
func fit(x, y []float64, seg []int) Fit {
	n := min(len(x), len(y))
	if seg != nil {
		n = min(n, len(seg))
	}
	f := Fit{N: n, Low: math.Inf(-1), High: math.Inf(1)}
	p := pairPool.Get().(*pairs)
	defer func() { p.x, p.y, p.seg = nil, nil, nil; pairPool.Put(p) }()
	p.start(x[:n], y[:n], seg)
	if p.total == 0 {
		return f
	}
	if p.total%2 == 1 {
		f.Slope = p.at(p.total / 2)
	} else {
		f.Slope = (p.at(p.total/2-1) + p.at(p.total/2)) / 2
	}
	icpt := intercepts(x[:n], y[:n], seg, f.Slope)
	f.Intercept = icpt.last
	rest := make([]float64, n)
	for i := range n {
		rest[i] = math.Abs(y[i] - icpt.at(i, x[i], f.Slope))
	}
	f.Sigma = MADScale * median(rest)
	resid := make([]float64, n)
	for i := range n {
		resid[i] = y[i] - icpt.at(i, x[i], f.Slope)
	}
	f.R2 = rSquared(y[:n], resid)
	f.Rho = autocorrelation(x[:n], resid)
	v := 0.0
	for _, part := range parts(y[:n], seg) {
		v += kendallVariance(part)
	}
	f.Low, f.High = senInterval(p.total, p.at, v, f.Rho)
	return f
}

// segmentLines are each segment's intercept for a slope.
type segmentLines struct {
	seg  []int
	of   map[int]float64
	last float64
}

// at is point i's line at x.
func (l segmentLines) at(i int, x, slope float64) float64 {
	if l.seg == nil {
		return l.last + slope*x
	}
	return l.of[l.seg[i]] + slope*x
}

// intercepts finds each segment's intercept for slope: the median of
// y − slope·x over its points.
func intercepts(x, y []float64, seg []int, slope float64) segmentLines {
	l := segmentLines{seg: seg, of: map[int]float64{}}
	by := map[int][]float64{}
	last := 0
	for i := range y {
		k := 0
		if seg != nil {
			k = seg[i]
		}
		by[k] = append(by[k], y[i]-slope*x[i])
		last = k
	}
	for k, v := range by {
		l.of[k] = median(v)
	}
	l.last = l.of[last]
	return l
}

// parts splits y by segment.
func parts(y []float64, seg []int) [][]float64 {
	if seg == nil {
		return [][]float64{y}
	}
	by := map[int][]float64{}
	var order []int
	for i, v := range y {
		if _, ok := by[seg[i]]; !ok {
			order = append(order, seg[i])
		}
		by[seg[i]] = append(by[seg[i]], v)
	}
	out := make([][]float64, len(order))
	for i, k := range order {
		out[i] = by[k]
	}
	return out
}

// kendallVariance is the variance of Kendall's S for the points y under
// no trend: [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18, t the sizes of groups of
// equal y.
func kendallVariance(y []float64) float64 {
	n := float64(len(y))
	v := n * (n - 1) * (2*n + 5)
	ys := slices.Clone(y)
	slices.Sort(ys)
	for i := 0; i < len(ys); {
		j := i
		for j < len(ys) && ys[j] == ys[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			v -= t * (t - 1) * (2*t + 5)
		}
		i = j
	}
	return v / 18
}

// senInterval is the slope's confidence interval from the n pairwise
// slopes, at(k) the one at index k of them sorted, and the variance v of
// Kendall's S (see Line), widened for an autocorrelation rho > 0.
func senInterval(n int, at func(k int) float64, v, rho float64) (lo, hi float64) {
	if rho > 0 {
		rho = min(rho, maxRho)
		v *= (1 + rho) / (1 - rho)
	}
	N := float64(n)
	c := z95 * math.Sqrt(max(v, 0))
	m1, m2 := (N-c)/2, (N+c)/2+1 // ranks, from 1
	if m1 < 1 || m2 > N {
		return math.Inf(-1), math.Inf(1) // too few points to bound it
	}
	return rank(n, at, m1), rank(n, at, m2)
}

// rank is the value at rank r (from 1) of n values, at(k) the one at
// index k of them sorted, interpolated between neighbouring ranks.
func rank(n int, at func(k int) float64, r float64) float64 {
	i := int(math.Floor(r)) - 1
	frac := r - math.Floor(r)
	if i+1 >= n {
		return at(n - 1)
	}
	lo := at(i)
	if frac == 0 {
		return lo
	}
	return lo + frac*(at(i+1)-lo)
}

// rSquared is Fit.R2 for points y whose residuals from the line are
// resid.
func rSquared(y, resid []float64) float64 {
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var tot, res float64
	for i := range y {
		tot += (y[i] - mean) * (y[i] - mean)
		res += resid[i] * resid[i]
	}
	if tot == 0 {
		return 0
	}
	return min(max(1-res/tot, 0), 1)
}

// autocorrelation is Fit.Rho: the lag-1 autocorrelation of the residuals
// resid in the order of x.
func autocorrelation(x, resid []float64) float64 {
	n := len(resid)
	if n < MinAutoPoints {
		return 0
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, n)
	mean := 0.0
	for k, i := range order {
		r[k] = resid[i]
		mean += r[k]
	}
	mean /= float64(n)
	var num, den float64
	for k := range r {
		d := r[k] - mean
		den += d * d
		if k+1 < n {
			num += d * (r[k+1] - mean)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// Even fits y taken at evenly spaced x = 0, 1, 2, … (a sample a second, or
// at equal parts of a window).
func Even(y []float64) Fit {
	x := make([]float64, len(y))
	for i := range x {
		x[i] = float64(i)
	}
	return Line(x, y)
}

// At is the line's value at x.
func (f Fit) At(x float64) float64 { return f.Intercept + f.Slope*x }

// Bounded reports whether the slope's interval is bounded: the points
// were enough to say how far the slope may be from the truth.
func (f Fit) Bounded() bool { return !math.IsInf(f.Low, 0) && !math.IsInf(f.High, 0) }

// median returns the median of v, which it reorders.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return nth(v, n/2)
	}
	a := nth(v, n/2-1)
	// nth left every value from n/2 on at or above a: the next is their least.
	return (a + slices.Min(v[n/2:])) / 2
}

// nth returns the value that would be at index k of v sorted, in O(len(v))
// on average (Hoare's selection, the pivot the median of three), where
// sorting costs O(n log n): a fit of n points has n²/2 slopes. It
// reorders v so that the values before index k are at most it, and those
// after at least it.
func nth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three, placed at hi as the pivot.
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[mid] < v[hi] {
			v[mid], v[hi] = v[hi], v[mid]
		}
		pivot := v[hi]
		i, j := lo, hi-1
		for {
			for v[i] < pivot {
				i++
			}
			for j > lo && v[j] > pivot {
				j--
			}
			if i >= j {
				break
			}
			v[i], v[j] = v[j], v[i]
			i++
			j--
		}
		v[i], v[hi] = v[hi], v[i]
		switch {
		case k < i:
			hi = i - 1
		case k > i:
			lo = i + 1
		default:
			return v[i]
		}
	}
	return v[k]
}
