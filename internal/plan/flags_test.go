package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRates(t *testing.T) {
	tests := []struct {
		name, in string
		want     []float64
		wantErr  string // a substring of the error; "" for none
	}{
		{"list", "50,100,200", []float64{50, 100, 200}, ""},
		{"spaces and suffix", " 50/s, 100 /s ,0.5", []float64{50, 100, 0.5}, ""},
		{"one", "1e3", []float64{1000}, ""},
		{"empty", " ", nil, "want a comma-separated list such as 50,100,200"},
		{"empty item", "50,,100", nil, `item 2 is empty`},
		{"trailing comma", "50,", nil, `item 2 is empty`},
		{"not a number", "50,fast", nil, `rate "fast" (item 2): want a number per second such as 50 or 50/s`},
		{"zero", "0", nil, `rate "0" (item 1): want a positive rate per second, not 0`},
		{"negative", "10,-5/s", nil, `rate "-5/s" (item 2): want a positive rate per second, not -5`},
		{"infinite", "inf", nil, `rate "inf" (item 1): want a finite rate per second, not +Inf`},
		{"too high", "2e7", nil, `rate "2e7" (item 1): want at most 10000000 per second`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRates(tt.in)
			checkErr(t, "ParseRates", tt.in, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRates(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseVUs(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
		wantErr  string
	}{
		{"list", "10, 50,100", []int{10, 50, 100}, ""},
		{"empty", "", nil, "want a comma-separated list such as 10,50,100"},
		{"fraction", "1.5", nil, `vus "1.5" (item 1): want a whole number of virtual users such as 10`},
		{"zero", "10,0", nil, `vus "0" (item 2): want at least 1 virtual user, not 0`},
		{"too many", "1000001", nil, `vus "1000001" (item 1): want at most 1000000 virtual users`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVUs(tt.in)
			checkErr(t, "ParseVUs", tt.in, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseVUs(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		name, in string
		want     time.Duration
		wantErr  string
	}{
		{"seconds", "60s", time.Minute, ""},
		{"compound", " 1m30s ", 90 * time.Second, ""},
		{"zero", "0", 0, ""},
		{"bare number", "60", 0, `duration "60": want a duration such as "60s"`},
		{"garbage", "soon", 0, `duration "soon": want a duration such as "60s"`},
		{"empty", "", 0, `want a duration such as "60s"`},
		{"negative", "-5s", 0, `duration "-5s": want a non-negative duration such as "60s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			checkErr(t, "ParseDuration", tt.in, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name, in, wantName, wantValue, wantErr string
	}{
		{"plain", "X-Token: abc", "X-Token", "abc", ""},
		{"colon in value", "Referer:  http://h:1/ ", "Referer", "http://h:1/", ""},
		{"empty value", "X-Empty:", "X-Empty", "", ""},
		{"no colon", "X-Token abc", "", "", `header "X-Token abc": want "Name: value"`},
		{"no name", ": abc", "", "", `header ": abc": want a header name`},
		{"space in name", "X Token: abc", "", "", `header name "X Token" must not contain spaces`},
		{"line break", "X-A: b\r\nX-B: c", "", "", `must not contain line breaks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, value, err := ParseHeader(tt.in)
			checkErr(t, "ParseHeader", tt.in, err, tt.wantErr)
			if name != tt.wantName || value != tt.wantValue {
				t.Errorf("ParseHeader(%q) = %q, %q, want %q, %q", tt.in, name, value, tt.wantName, tt.wantValue)
			}
		})
	}
}

// checkErr checks that err contains want, or is nil when want is "".
func checkErr(t *testing.T, f, in string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s(%q) = %v, want no error", f, in, err)
	case want != "" && err == nil:
		t.Errorf("%s(%q) = nil error, want one containing %q", f, in, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s(%q) = %q, want an error containing %q", f, in, err, want)
	}
}
