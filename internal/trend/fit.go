package trend

import (
	"math"
	"slices"
)

// Fit is a robust line through a series: y ≈ Intercept + Slope·x.
type Fit struct {
	// Slope is the Theil–Sen slope: the median of (y_j − y_i)/(x_j − x_i)
	// over every pair i < j with x_i ≠ x_j.
	Slope float64
	// Intercept is the median of y_i − Slope·x_i.
	Intercept float64
	// Sigma is the points' scatter about the line: 1.4826 times the
	// median absolute residual, which is the standard deviation for
	// normal noise and is not moved by a few outliers.
	Sigma float64
	// N is the number of points fitted.
	N int
}

// MADScale makes a median absolute deviation a standard deviation for
// normal noise.
const MADScale = 1.4826

// Line fits y against x (the same length, at least two points with
// different x). With fewer it returns a Fit of N = len(y) and zeros.
// It costs O(n² log n): meant for tens or hundreds of points.
func Line(x, y []float64) Fit {
	n := min(len(x), len(y))
	f := Fit{N: n}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return f
	}
	f.Slope = median(slopes)
	rest := make([]float64, n)
	for i := range n {
		rest[i] = y[i] - f.Slope*x[i]
	}
	f.Intercept = median(rest)
	for i := range n {
		rest[i] = math.Abs(y[i] - f.At(x[i]))
	}
	f.Sigma = MADScale * median(rest)
	return f
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

// median returns the median of v, which it reorders.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
