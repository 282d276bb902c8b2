package sink

import (
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestSamplerDraw(t *testing.T) {
	ms := time.Millisecond
	slackish := newSampler(Latency{Percentiles: map[float64]time.Duration{0.5: 40 * ms, 0.99: 200 * ms}})
	for _, tc := range []struct {
		name string
		s    sampler
		u    float64
		want time.Duration
	}{
		{"fixed", newSampler(Latency{Fixed: 50 * ms}), 0.7, 50 * ms},
		{"zero", newSampler(Latency{}), 0.7, 0},
		{"start", slackish, 0, 0},
		{"half way to p50", slackish, 0.25, 20 * ms},
		{"p50", slackish, 0.5, 40 * ms},
		{"between", slackish, 0.745, 120 * ms},
		{"p99", slackish, 0.99, 200 * ms},
		{"above the last point", slackish, 0.9999, 200 * ms},
		{"one point", newSampler(Latency{Percentiles: map[float64]time.Duration{1: 100 * ms}}), 0.5, 50 * ms},
		{"step", newSampler(Latency{Percentiles: map[float64]time.Duration{0.5: 0, 0.6: 10 * ms}}), 0.3, 0},
	} {
		if got := tc.s.draw(tc.u); absDur(got-tc.want) > time.Microsecond {
			t.Errorf("%s: draw(%v) = %v, want %v", tc.name, tc.u, got, tc.want)
		}
	}
}

// TestLatencyDistribution draws as requests do (the seeded stream) and
// checks the configured percentiles come out.
func TestLatencyDistribution(t *testing.T) {
	ms := time.Millisecond
	for _, pct := range []map[float64]time.Duration{
		{0.5: 40 * ms, 0.99: 200 * ms},
		{0.5: 5 * ms, 0.9: 20 * ms, 0.99: 80 * ms, 1: 150 * ms},
	} {
		s := newSampler(Latency{Percentiles: pct})
		const n = 200_000
		got := make([]time.Duration, n)
		for i := range got {
			u, _ := draws(1, uint64(i))
			got[i] = s.draw(u)
		}
		slices.Sort(got)
		for q, want := range pct {
			if q == 1 {
				continue // the maximum, not a percentile of the draws
			}
			v := got[int(q*n)]
			if math.Abs(float64(v-want)) > 0.05*float64(want) {
				t.Errorf("%v: p%v of %d draws = %v, want %v ± 5 %%", pct, q*100, n, v, want)
			}
		}
	}
}

func TestDrawsUniform(t *testing.T) {
	const n, bins = 100_000, 10
	var lat, fail [bins]int
	for i := range uint64(n) {
		a, b := draws(99, i)
		if a < 0 || a >= 1 || b < 0 || b >= 1 {
			t.Fatalf("draws(99, %d) = %v, %v, want [0, 1)", i, a, b)
		}
		lat[int(a*bins)]++
		fail[int(b*bins)]++
	}
	for i := range bins {
		// Each bin expects 10000 with a standard deviation of about 95.
		if lat[i] < 9500 || lat[i] > 10500 || fail[i] < 9500 || fail[i] > 10500 {
			t.Errorf("bin %d: %d latency and %d error draws of %d, want about %d", i, lat[i], fail[i], n, n/bins)
		}
	}
	if a, b := draws(1, 5); a == b {
		t.Errorf("draws(1, 5) = %v, %v: the two draws of a request must differ", a, b)
	}
}

// TestSamplerProperties: for any valid table, draws never decrease with u
// and stay within [0, the largest configured latency].
func TestSamplerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		qs := rapid.SliceOfNDistinct(rapid.Float64Range(0.001, 1), 1, 6, rapid.ID[float64]).Draw(t, "quantiles")
		slices.Sort(qs)
		ds := rapid.SliceOfN(rapid.Int64Range(0, int64(time.Second)), len(qs), len(qs)).Draw(t, "latencies")
		slices.Sort(ds)
		pct := map[float64]time.Duration{}
		for i, q := range qs {
			pct[q] = time.Duration(ds[i])
		}
		l := Latency{Percentiles: pct}
		if err := l.validate(); err != nil {
			t.Fatalf("validate(%v) = %v", pct, err)
		}
		s := newSampler(l)
		prev := time.Duration(-1)
		for i := range 1000 {
			u := float64(i) / 1000
			d := s.draw(u)
			if d < prev || d < 0 || d > time.Duration(ds[len(ds)-1]) {
				t.Fatalf("draw(%v) = %v after %v, want non-decreasing within [0, %v]", u, d, prev, time.Duration(ds[len(ds)-1]))
			}
			prev = d
		}
		for i, q := range qs {
			if got := s.draw(q); absDur(got-time.Duration(ds[i])) > time.Microsecond {
				t.Fatalf("draw(%v) = %v, want the configured %v", q, got, time.Duration(ds[i]))
			}
		}
	})
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
