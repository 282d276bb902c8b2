package trend

import (
	"math"
	"math/rand/v2"
	"slices"
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

// The interval holds the true slope about 95 % of the time, for
// independent noise and for noise that wanders (each point's deviation
// carried into the next): the widening for autocorrelation keeps the
// second near its level too, where Sen's interval alone would not.
func TestIntervalCoverage(t *testing.T) {
	tests := []struct {
		name     string
		rho      float64 // the noise's lag-1 autocorrelation
		atLeast  float64 // the share of trials whose interval holds the slope
		atMost   float64
		widerFor bool // the fits report a positive Rho
	}{
		{"independent", 0, 0.90, 0.99, false},
		{"wandering", 0.7, 0.85, 1, true},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(3, 4))
		held, trials, rhoSum := 0, 400, 0.0
		for range trials {
			slope := r.Float64()*2 - 1
			x := make([]float64, 60)
			y := make([]float64, 60)
			e := 0.0
			for i := range x {
				x[i] = float64(i)
				e = tt.rho*e + math.Sqrt(1-tt.rho*tt.rho)*r.NormFloat64()
				y[i] = 10 + slope*x[i] + 2*e
			}
			f := Line(x, y)
			rhoSum += f.Rho
			if !f.Bounded() {
				t.Fatalf("%s: 60 points give no bounded interval: %+v", tt.name, f)
			}
			if f.Low <= slope && slope <= f.High {
				held++
			}
			if f.Low > f.Slope || f.High < f.Slope {
				t.Fatalf("%s: interval [%v, %v] leaves out its own slope %v", tt.name, f.Low, f.High, f.Slope)
			}
		}
		share := float64(held) / float64(trials)
		if share < tt.atLeast || share > tt.atMost {
			t.Errorf("%s: the interval held the slope in %.1f%% of %d trials, want %.0f–%.0f%%", tt.name, 100*share, trials, 100*tt.atLeast, 100*tt.atMost)
		}
		if mean := rhoSum / float64(trials); (mean > 0.3) != tt.widerFor {
			t.Errorf("%s: mean Rho = %.2f, want it above 0.3: %v", tt.name, mean, tt.widerFor)
		}
	}
}

func TestIntervalAndR2(t *testing.T) {
	tests := []struct {
		name         string
		y            []float64
		bounded      bool
		low, high    float64 // when bounded
		r2Min, r2Max float64
	}{
		{"two points", []float64{1, 2}, false, 0, 0, 1, 1},
		{"exact line", []float64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}, true, 2, 2, 1, 1},
		{"flat", []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, true, 0, 0, 0, 0},
		// A flat count that steps once: ties shrink the variance, and the
		// interval still holds zero.
		{"one step", []float64{12, 12, 12, 12, 13, 12, 12, 12, 12, 12}, true, 0, 0, 0, 0.2},
	}
	for _, tt := range tests {
		f := Even(tt.y)
		if f.Bounded() != tt.bounded {
			t.Errorf("%s: Even(%v).Bounded() = %v, want %v (%+v)", tt.name, tt.y, f.Bounded(), tt.bounded, f)
			continue
		}
		if tt.bounded && (!near(f.Low, tt.low, 1e-9) || !near(f.High, tt.high, 1e-9)) {
			t.Errorf("%s: Even(%v) interval = [%v, %v], want [%v, %v]", tt.name, tt.y, f.Low, f.High, tt.low, tt.high)
		}
		if f.R2 < tt.r2Min-1e-9 || f.R2 > tt.r2Max+1e-9 {
			t.Errorf("%s: Even(%v).R2 = %v, want %v–%v", tt.name, tt.y, f.R2, tt.r2Min, tt.r2Max)
		}
	}
}

// A flat series that steps down once (a restart) has a slope when fitted
// whole (whose interval its autocorrelation widens), none when fitted by
// segments; a leak that a restart set back
// keeps its slope by segments, which the whole fit loses.
func TestSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var x, flat, leak []float64
	var seg []int
	for i := range 40 {
		s := 0
		if i >= 20 {
			s = 1
		}
		x, seg = append(x, float64(i)), append(seg, s)
		noise := r.NormFloat64() * 0.05
		flat = append(flat, 10-0.7*float64(s)+noise)
		leak = append(leak, 5+2*float64(i-20*s)+noise)
	}
	whole, parts := Line(x, flat), Segments(x, flat, seg)
	if whole.Slope > -0.015 {
		t.Errorf("Line(flat with a step) = %+v: want the step read as a slope below -0.015", whole)
	}
	if !parts.Bounded() || parts.Low > 0 || parts.High < 0 || math.Abs(parts.Slope) > 0.005 || !near(parts.Intercept, 9.3, 0.1) {
		t.Errorf("Segments(flat with a step) = %+v, want an interval holding 0 and the last segment's level 9.3", parts)
	}
	if f := Segments(x, leak, seg); !near(f.Slope, 2, 0.01) || f.Low > 2 || f.High < 2 || !near(f.Intercept, 5-40, 0.1) {
		t.Errorf("Segments(leak set back) = %+v, want slope 2 in its interval, intercept -35", f)
	}
	if f := Line(x, leak); near(f.Slope, 2, 0.2) {
		t.Errorf("Line(leak set back) = %+v: the whole fit should not find the slope", f)
	}
}

// nth finds what sorting would put at each index, with ties and runs of
// equal values, and median agrees with sorting.
func TestNth(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + r.IntN(60)
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(r.IntN(1 + trial%7*5)) // many ties when small
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for k := range n {
			w := slices.Clone(v)
			if got := nth(w, k); got != sorted[k] {
				t.Fatalf("nth(%v, %d) = %v, want %v", v, k, got, sorted[k])
			}
		}
		want := sorted[n/2]
		if n%2 == 0 {
			want = (sorted[n/2-1] + sorted[n/2]) / 2
		}
		if got := median(slices.Clone(v)); got != want {
			t.Fatalf("median(%v) = %v, want %v", v, got, want)
		}
	}
}
