package monitor

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// naive summarises readings one by one, as the Watcher did when it kept
// every reading: the reference for history.
func naive(vals [][]float64, ats []time.Time, from, to time.Time, counter bool) map[int]Stat {
	type state struct {
		st              Stat
		n               int
		sum, increase   float64
		firstAt, lastAt time.Time
	}
	states := map[int]*state{}
	for i, row := range vals {
		if ats[i].Before(from) || ats[i].After(to) {
			continue
		}
		for id, v := range row {
			if math.IsNaN(v) {
				continue
			}
			s := states[id]
			if s == nil {
				s = &state{st: Stat{Max: v, Counter: counter}, firstAt: ats[i]}
				states[id] = s
			} else if v >= s.st.Last {
				s.increase += v - s.st.Last
			} else {
				s.increase += v
			}
			s.st.Last, s.st.Max = v, max(s.st.Max, v)
			s.sum += v
			s.n++
			s.lastAt = ats[i]
		}
	}
	out := map[int]Stat{}
	for id, s := range states {
		s.st.Mean = s.sum / float64(s.n)
		if secs := s.lastAt.Sub(s.firstAt).Seconds(); counter && secs > 0 {
			s.st.Rate = s.increase / secs
		}
		out[id] = s.st
	}
	return out
}

// figuresOf summarises a history's [from, to] by series id.
func figuresOf(h *history, from, to time.Time, series int, counter bool) map[int]Stat {
	accs := make([]acc, series)
	h.summarise(from, to, accs)
	out := map[int]Stat{}
	for id, a := range accs {
		if a.n > 0 {
			out[id] = a.stat(counter)
		}
	}
	return out
}

// Folding readings into blocks, and blocks into bigger ones, loses
// nothing of the figures: the whole history, and any window of the
// readings still kept one by one, summarise as the readings themselves.
// Values are small integers, so sums do not depend on their grouping.
func TestHistoryFoldsExactly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		series := rapid.IntRange(1, 4).Draw(t, "series")
		readings := rapid.IntRange(1, 4000).Draw(t, "readings") // blocks past 180, merges past 1,140
		counter := rapid.Bool().Draw(t, "counter")
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		h := &history{budget: 1} // the fewest readings one by one, the fewest blocks
		var vals [][]float64
		var ats []time.Time
		for i := range readings {
			row := make([]float64, rnd.IntN(series+1)) // a series may be new
			for id := range row {
				row[id] = math.NaN()
				if v := rnd.IntN(52) - 1; v >= 0 { // a reset now and then, absent now and then
					row[id] = float64(v)
				}
			}
			at := t0.Add(time.Duration(i) * time.Second)
			vals, ats = append(vals, row), append(ats, at)
			h.add(at, row, series)
		}
		raw := len(h.rows) - h.blocks
		if raw > minRaw || h.blocks > minBlocks {
			t.Fatalf("history holds %d readings one by one and %d blocks, want at most %d and %d", raw, h.blocks, minRaw, minBlocks)
		}
		all := [2]time.Time{t0, ats[len(ats)-1]}
		back := rapid.IntRange(1, raw).Draw(t, "back")
		recent := [2]time.Time{ats[len(ats)-back], all[1]}
		for _, w := range [][2]time.Time{all, recent} {
			want := naive(vals, ats, w[0], w[1], counter)
			got := figuresOf(h, w[0], w[1], series, counter)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("figures of [%v, %v] mismatch (-want +got):\n%s", w[0].Sub(t0), w[1].Sub(t0), d)
			}
		}
	})
}

// However long the run, a history's memory stays within its budget.
func TestHistoryBounded(t *testing.T) {
	const series, readings = 50, 5000
	h := &history{budget: 64 << 10}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range readings {
		row := make([]float64, series)
		for id := range row {
			row[id] = float64(i)
		}
		h.add(t0.Add(time.Duration(i)*time.Second), row, series)
	}
	maxRaw, maxBlocks := max(minRaw, h.budget/(8*series)), max(minBlocks, h.budget/(64*series))
	if raw := len(h.rows) - h.blocks; raw > maxRaw || h.blocks > maxBlocks {
		t.Errorf("after %d readings: %d kept one by one and %d blocks, want at most %d and %d", readings, raw, h.blocks, maxRaw, maxBlocks)
	}
	got := figuresOf(h, t0, t0.Add(readings*time.Second), series, true)
	want := Stat{Last: readings - 1, Max: readings - 1, Mean: (readings - 1) / 2.0, Rate: 1, Counter: true}
	if d := cmp.Diff(want, got[series-1]); d != "" {
		t.Errorf("figures of the whole history mismatch (-want +got):\n%s", d)
	}
}
