package trend

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestLine(t *testing.T) {
	tests := []struct {
		name             string
		y                []float64
		slope, intercept float64
		sigmaAtMost, tol float64
	}{
		{"flat", []float64{5, 5, 5, 5}, 0, 5, 0, 1e-9},
		{"exact line", []float64{1, 3, 5, 7, 9}, 2, 1, 0, 1e-9},
		// One wild reading (a restart) does not tilt the line.
		{"outlier", []float64{10, 11, 12, 500, 14, 15, 16}, 1, 10, 1e-9, 1e-9},
		// One point has no slope.
		{"one point", []float64{7}, 0, 0, 0, 1e-9},
	}
	for _, tt := range tests {
		f := Even(tt.y)
		if !near(f.Slope, tt.slope, tt.tol) || !near(f.Intercept, tt.intercept, tt.tol) || f.Sigma > tt.sigmaAtMost+tt.tol || f.N != len(tt.y) {
			t.Errorf("%s: Even(%v) = %+v, want slope %v, intercept %v, sigma ≤ %v", tt.name, tt.y, f, tt.slope, tt.intercept, tt.sigmaAtMost)
		}
	}
}

// Noise about a line is measured as its standard deviation, and the slope
// found is the line's within its noise; property over random series.
func TestLineNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		slope, sd := r.Float64()*4-2, 0.5+r.Float64()*5
		x := make([]float64, 200)
		y := make([]float64, 200)
		for i := range x {
			x[i] = float64(i) / 10
			y[i] = 3 + slope*x[i] + r.NormFloat64()*sd
		}
		f := Line(x, y)
		se := sd / math.Sqrt(float64(len(x))*math.Pow(x[len(x)-1], 2)/12)
		if !near(f.Slope, slope, 5*se) || f.Sigma < 0.75*sd || f.Sigma > 1.25*sd {
			t.Errorf("slope %.3f sd %.2f: fit %+v", slope, sd, f)
		}
	}
}
