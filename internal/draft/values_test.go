package draft

import (
	"context"
	"strings"
	"testing"
)

// Secrets are found by their values too, whatever their names: a JWT in
// a header named otherwise, an API key's or a random token's shape in a
// query, a body or the path; and by the names of one-time codes: otp,
// pin, passphrase, refresh, an OAuth code. Each goes to the environment,
// and the draft says what it was taken for. Ids (numbers, UUIDs, hex)
// stay.
func TestDraftFindsSecretsByValue(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	cmd := `curl 'https://h.test/reset/` + jwt + `/items/6f1c2a9e-3b7d-4c55-9a0e-2d8f41b7c3a1?code=SplxlOBeZQQYbYS6WxSbIA&page=2&state=af0ifjsldkj' ` +
		`-H 'X-Custom: ` + jwt + `' -H 'X-Request-Id: 9ee2fdb7a1adb423db282574' -H 'Content-Type: application/json' ` +
		`--data-raw '{"otp":"482913","pin":"0000","passphrase":"correct horse","refresh":"r-1","key_id":"k1","stripe":"sk_live_4eC39HqLyjWDarjtT1zdp7dc","id":42}'`
	d, err := FromCurl(context.Background(), []Source{{Name: "c", Text: cmd}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	y := string(d.YAML)
	for _, s := range []string{jwt, "SplxlOBeZQQYbYS6WxSbIA", "482913", `"0000"`, "correct horse", "r-1", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"} {
		if strings.Contains(y, s) {
			t.Errorf("the draft holds the secret %q:\n%s", s, y)
		}
	}
	for _, keep := range []string{"6f1c2a9e-3b7d-4c55-9a0e-2d8f41b7c3a1", "page=2", "9ee2fdb7a1adb423db282574", `"id":42`} {
		if !strings.Contains(y, keep) {
			t.Errorf("the draft lost %q:\n%s", keep, y)
		}
	}
	var said []string
	for _, v := range d.Env {
		said = append(said, v.Name+": "+v.What)
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{"X-Custom header (a JWT, by its shape)", "query parameter code", `"otp"`, `"stripe"`, "(an API key, by its prefix)", "a path segment"} {
		if !strings.Contains(all, want) {
			t.Errorf("the variables do not say %q:\n%s", want, all)
		}
	}
	parsed(t, d)
}
