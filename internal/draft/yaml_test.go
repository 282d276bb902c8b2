package draft

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
)

// quote's scalars read back as the same string, in every place a draft
// writes them: a block value, a flow mapping's value, a flow sequence's
// item and a key.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "GET /api/x", "http://127.0.0.1:8080", "/a?b=c&d=e", "yes", "No", "null", "~", "1", "1.5", "0x1f",
		"2026-01-02", "a: b", "a:", "- a", "#x", "a #x", "'q'", `"d"`, "{{uuid}}", "a\nb", " a", "a ", "\t", "\x00", "é", "\u2028", "=", "<<", "a,b", "[a]", "{a}",
		"Bearer {{env \"X\"}}", "\xff", ".inf", "-.5", "+1", "1_000", "0o17", "on", "Off", "y", "@a", "`a`", "%a", "!a", "&a", "*a", "|", ">", "?", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s
		if !utf8.ValidString(s) {
			want = strings.ToValidUTF8(s, "\uFFFD")
		}
		q := quote(s)
		if strings.ContainsAny(q, "\n\r") {
			t.Fatalf("quote(%q) = %q: more than one line", s, q)
		}
		for _, doc := range []string{"v: " + q + "\n", "{v: " + q + "}\n", "v: [" + q + "]\n", q + ": 1\n"} {
			var m map[string]any
			if err := unmarshalWithin(doc, &m); err != nil {
				t.Fatalf("quote(%q) = %s: %q does not parse: %v", s, q, doc, err)
			}
			var got any
			switch {
			case strings.HasPrefix(doc, "v: ["):
				list, _ := m["v"].([]any)
				if len(list) != 1 {
					t.Fatalf("quote(%q) = %s: %q gives %#v", s, q, doc, m)
				}
				got = list[0]
			case strings.HasSuffix(doc, ": 1\n"):
				for k := range m {
					got = k
				}
				if len(m) != 1 {
					t.Fatalf("quote(%q) = %s: %q gives %#v", s, q, doc, m)
				}
			default:
				got = m["v"]
			}
			if got != want {
				t.Fatalf("quote(%q) = %s: %q reads back %#v, want %q", s, q, doc, got, want)
			}
		}
	})
}

func TestEnvStem(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization": "AUTHORIZATION", "X-Api-Key": "X_API_KEY", "bearerAuth": "BEARER_AUTH", "api_key": "API_KEY",
		"access-token": "ACCESS_TOKEN", "": "SECRET", "--": "SECRET", "oauth2Token": "OAUTH2_TOKEN", "é": "SECRET",
	} {
		if got := envStem(in); got != want {
			t.Errorf("envStem(%q) = %q, want %q", in, got, want)
		}
	}
}

// unmarshalWithin parses doc, failing when the parser takes over a few
// seconds.
func unmarshalWithin(doc string, m *map[string]any) error {
	done := make(chan error, 1)
	go func() { done <- yaml.Unmarshal([]byte(doc), m) }()
	select {
	case err := <-done:
		return err
	case <-time.After(3 * time.Second):
		return fmt.Errorf("the parser still runs after 3s")
	}
}
