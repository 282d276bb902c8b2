package plan

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"rate", "rate", 0},
		{"", "abc", 3},
		{"rat", "rate", 1},       // an insertion
		{"ratee", "rate", 1},     // a deletion
		{"rats", "rate", 1},      // a substitution
		{"emial", "email", 1},    // a swap of two neighbours
		{"warmpu", "warmup", 1},  // a swap at the end
		{"rps", "vus", 2},        // two substitutions
		{"kitten", "sitting", 3}, // substitutions and an insertion
		{"ca", "abc", 3},         // a swapped pair is not edited again
		{"headers", "header", 1}, // a plural
		{"ack_timout", "ack_timeout", 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

// The distance is symmetric, zero only between equal strings, at least
// the difference of their lengths and at most the longer length.
func FuzzDistance(f *testing.F) {
	f.Add("emial", "email")
	f.Add("", "x")
	f.Add("kitten", "sitting")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := Distance(a, b)
		if back := Distance(b, a); back != d {
			t.Errorf("Distance(%q, %q) = %d, but Distance(%q, %q) = %d", a, b, d, b, a, back)
		}
		if (d == 0) != (a == b) {
			t.Errorf("Distance(%q, %q) = %d", a, b, d)
		}
		if lo, hi := max(len(a), len(b))-min(len(a), len(b)), max(len(a), len(b)); d < lo || d > hi {
			t.Errorf("Distance(%q, %q) = %d, want between %d and %d", a, b, d, lo, hi)
		}
	})
}
