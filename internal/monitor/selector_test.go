package monitor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in      string
		want    selector
		wantErr string
	}{
		{in: "queue_depth", want: selector{name: "queue_depth"}},
		{in: "  queue_depth  ", want: selector{name: "queue_depth"}},
		{in: `queue_depth{lane="chat"}`, want: selector{"queue_depth", []labelMatch{{"lane", "chat"}}}},
		{in: `q{ a = "x" , b="y", }`, want: selector{"q", []labelMatch{{"a", "x"}, {"b", "y"}}}},
		{in: `q{}`, want: selector{name: "q"}},
		{in: `q{a="say \"hi\"\\\n"}`, want: selector{"q", []labelMatch{{"a", "say \"hi\"\\\n"}}}},
		{in: `q{a="{},="}`, want: selector{"q", []labelMatch{{"a", "{},="}}}},
		{in: "", wantErr: "no name"},
		{in: `{a="b"}`, wantErr: "no name"},
		{in: `bad name`, wantErr: "bad name"},
		{in: `q{a=b}`, wantErr: "want a quoted value at column 5"},
		{in: `q{a!="b"}`, wantErr: "want = after the label name"},
		{in: `q{a="b"`, wantErr: "want , or }"},
		{in: `q{a="b`, wantErr: "unterminated value"},
		{in: `q{a="\t"}`, wantErr: `unknown escape`},
		{in: `q{a="b"} x`, wantErr: "text after }"},
		{in: `q{="b"}`, wantErr: "want a label name"},
	}
	for _, tc := range tests {
		got, err := parseSelector(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseSelector(%q) = %v, want an error with %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSelector(%q) = %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(selector{}, labelMatch{})); d != "" {
			t.Errorf("parseSelector(%q) mismatch (-want +got):\n%s", tc.in, d)
		}
	}
}

// FuzzParseSelector checks that parsing never panics and that a parsed
// selector's canonical form parses back to the same selector.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"q", `q{a="b"}`, `q{a="x\"y",b="\\"}`, `q{a=`, "{}", `q{a="\n"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := parseSelector(in)
		if err != nil {
			return
		}
		again, err := parseSelector(s.String())
		if err != nil {
			t.Fatalf("parseSelector(%q) = %v; it came from parseSelector(%q)", s.String(), err, in)
		}
		// canonical sorts labels; compare as canonical strings.
		if again.String() != s.String() {
			t.Fatalf("round trip of %q: %q, want %q", in, again.String(), s.String())
		}
	})
}
