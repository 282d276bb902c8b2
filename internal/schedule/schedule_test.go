package schedule

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestUniformConstant(t *testing.T) {
	tests := []struct {
		name  string
		shape Shape
		i     int64
		want  time.Duration
		ok    bool
	}{
		{"first arrival at zero", Constant{Rate: 100, Len: time.Second}, 0, 0, true},
		{"100/s gap is 10ms", Constant{Rate: 100, Len: time.Second}, 1, 10 * time.Millisecond, true},
		{"last inside", Constant{Rate: 100, Len: time.Second}, 99, 990 * time.Millisecond, true},
		{"past the end", Constant{Rate: 100, Len: time.Second}, 100, 0, false},
		{"2000/s", Constant{Rate: 2000, Len: time.Second}, 1999, 999500 * time.Microsecond, true},
		{"stairs second step", Stairs([]float64{10, 100}, time.Second), 11, time.Second + 10*time.Millisecond, true},
		{"stairs end", Stairs([]float64{10, 100}, time.Second), 110, 0, false},
		{"zero rate has nothing", Constant{Rate: 0, Len: time.Second}, 0, 0, false},
		{"ramp 0→100 over 2s: first", Linear{From: 0, To: 100, Len: 2 * time.Second}, 0, 0, true},
		// N(t) = 25 t², so n = 25 at t = 1s.
		{"ramp 0→100 over 2s: 25th", Linear{From: 0, To: 100, Len: 2 * time.Second}, 25, time.Second, true},
		{"ramp flat equals constant", Linear{From: 50, To: 50, Len: time.Second}, 5, 100 * time.Millisecond, true},
		{"ramp past end", Linear{From: 0, To: 100, Len: 2 * time.Second}, 100, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Uniform{Shape: tt.shape}.Offset(tt.i)
			if ok != tt.ok || (ok && absDur(got-tt.want) > time.Microsecond) {
				t.Errorf("Offset(%d) = %v, %v, want %v, %v", tt.i, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// genShape draws a constant, a ramp, or stairs of them.
func genShape(t *rapid.T) Shape {
	rate := func(l string) float64 { return rapid.Float64Range(0.5, 20000).Draw(t, l) }
	length := func(l string) time.Duration {
		return time.Duration(rapid.Int64Range(int64(50*time.Millisecond), int64(5*time.Second)).Draw(t, l))
	}
	part := func(l string) Shape {
		if rapid.Bool().Draw(t, l+".ramp") {
			return Linear{From: rapid.Float64Range(0, 20000).Draw(t, l+".from"), To: rate(l + ".to"), Len: length(l + ".len")}
		}
		return Constant{Rate: rate(l + ".rate"), Len: length(l + ".len")}
	}
	n := rapid.IntRange(1, 4).Draw(t, "parts")
	if n == 1 {
		return part("p0")
	}
	seq := make(Sequence, n)
	for i := range seq {
		seq[i] = part("p" + string(rune('0'+i)))
	}
	return seq
}

func schedules(t *rapid.T, s Shape) []Schedule {
	return []Schedule{Uniform{Shape: s}, NewPoisson(s, rapid.Uint64().Draw(t, "seed"))}
}

// Offsets never decrease and never leave [0, Length).
func TestPropertyMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genShape(t)
		for _, sc := range schedules(t, s) {
			prev := time.Duration(-1)
			for i := int64(0); ; i++ {
				off, ok := sc.Offset(i)
				if !ok {
					break
				}
				if off < prev {
					t.Fatalf("Offset(%d) = %v < Offset(%d) = %v", i, off, i-1, prev)
				}
				if off < 0 || off > s.Length() {
					t.Fatalf("Offset(%d) = %v outside [0, %v]", i, off, s.Length())
				}
				prev = off
			}
		}
	})
}

// The count of uniform arrivals in any window [a, b) is ∫ rate over it, ±1.
func TestPropertyWindowCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genShape(t)
		u := Uniform{Shape: s}
		var offs []time.Duration
		for i := int64(0); ; i++ {
			off, ok := u.Offset(i)
			if !ok {
				break
			}
			offs = append(offs, off)
		}
		if want := math.Ceil(s.Total()); math.Abs(float64(len(offs))-want) > 1 {
			t.Fatalf("count = %d, want ⌈%v⌉", len(offs), s.Total())
		}
		a := time.Duration(rapid.Int64Range(0, int64(s.Length())).Draw(t, "a"))
		b := time.Duration(rapid.Int64Range(int64(a), int64(s.Length())).Draw(t, "b"))
		got := 0
		for _, o := range offs {
			if o >= a && o < b {
				got++
			}
		}
		want := expected(s, b) - expected(s, a)
		if math.Abs(float64(got)-want) > 2 {
			t.Fatalf("arrivals in [%v, %v) = %d, want %.2f", a, b, got, want)
		}
	})
}

// expected integrates the rate of s from 0 to t by bisection on At.
func expected(s Shape, t time.Duration) float64 {
	lo, hi := 0.0, s.Total()
	for range 200 {
		mid := (lo + hi) / 2
		if s.At(mid) < t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// A Poisson schedule at rate r over a long window has about r·T arrivals and
// exponential gaps whose coefficient of variation is about 1.
func TestPoissonStatistics(t *testing.T) {
	p := NewPoisson(Constant{Rate: 1000, Len: 20 * time.Second}, 42)
	var n int64
	var sum, sumSq float64
	prev := time.Duration(0)
	for ; ; n++ {
		off, ok := p.Offset(n)
		if !ok {
			break
		}
		gap := (off - prev).Seconds()
		sum += gap
		sumSq += gap * gap
		prev = off
	}
	if n < 19500 || n > 20500 {
		t.Errorf("arrivals = %d, want 20000 ± 500", n)
	}
	mean := sum / float64(n)
	cv := math.Sqrt(sumSq/float64(n)-mean*mean) / mean
	if cv < 0.95 || cv > 1.05 {
		t.Errorf("coefficient of variation of gaps = %.3f, want ≈ 1", cv)
	}
}

// Poisson is a function of (shape, seed, i): random access agrees with
// sequential access.
func TestPoissonDeterministic(t *testing.T) {
	a := NewPoisson(Constant{Rate: 500, Len: time.Second}, 7)
	b := NewPoisson(Constant{Rate: 500, Len: time.Second}, 7)
	want, _ := a.Offset(300)
	for i := int64(0); i < 300; i++ {
		a.Offset(i)
	}
	if got, _ := b.Offset(300); got != want {
		t.Errorf("Offset(300) = %v on a fresh schedule, want %v", got, want)
	}
	if got, _ := a.Offset(300); got != want {
		t.Errorf("Offset(300) after replay = %v, want %v", got, want)
	}
}

func BenchmarkUniformOffset(b *testing.B) {
	u := Uniform{Shape: Stairs([]float64{100, 200, 400}, time.Hour)}
	var i int64
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := u.Offset(i); !ok {
			i = 0
		}
		i++
	}
}
