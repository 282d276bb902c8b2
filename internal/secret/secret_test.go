package secret

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api"},
		{"http://alice:s3cret@127.0.0.1/x", "http://alice:<redacted>@127.0.0.1/x"},
		{"http://alice@127.0.0.1/x", "http://alice@127.0.0.1/x"},
		{"http://h/x?page=2&access_token=abc&API_KEY=k", "http://h/x?page=2&access_token=<redacted>&API_KEY=<redacted>"},
		{"ws://h/widget?site=s1&token=t", "ws://h/widget?site=s1&token=<redacted>"},
		{"not a url", "not a url"},
		{"/relative?token=x", "/relative?token=x"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestArgs(t *testing.T) {
	n := Names{"X-Tenant-Secret"}
	in := []string{"run", "--url", "http://u:p@h/x?token=t", "--header", "Authorization: Bearer abc", "--header=Cookie: sid=1",
		"--header", "X-Tenant-Secret: 42", "--header", "Accept: */*", "--target=https://h/?key=k", "--rate", "10"}
	want := []string{"run", "--url", "http://u:<redacted>@h/x?token=<redacted>", "--header", "Authorization: <redacted>", "--header=Cookie: <redacted>",
		"--header", "X-Tenant-Secret: <redacted>", "--header", "Accept: */*", "--target=https://h/?key=<redacted>", "--rate", "10"}
	if got := n.Args(in); !slices.Equal(got, want) {
		t.Errorf("Args =\n%q\nwant\n%q", got, want)
	}
	if in[4] != "Authorization: Bearer abc" {
		t.Errorf("Args changed its input")
	}
}

// Assignments whose name mentions a secret word lose their value: an
// --env API_TOKEN=..., a --set db.password=... inside a command line.
func TestArgsAssignments(t *testing.T) {
	in := []string{"sweep", "--env", "API_TOKEN=s3cret", "--env=WORKERS={{.workers}}", "--env", "DB_PASSWORD=hunter2",
		"--apply", "helm upgrade app ./c --set workers.count={{.workers}} --set db.password=pw1 --set image.tag=1.2",
		"--slo", "p95<100ms,errors<1%"}
	want := []string{"sweep", "--env", "API_TOKEN=<redacted>", "--env=WORKERS={{.workers}}", "--env", "DB_PASSWORD=<redacted>",
		"--apply", "helm upgrade app ./c --set workers.count={{.workers}} --set db.password=<redacted> --set image.tag=1.2",
		"--slo", "p95<100ms,errors<1%"}
	if got := Names(nil).Args(in); !slices.Equal(got, want) {
		t.Errorf("Args =\n%q\nwant\n%q", got, want)
	}
}

func TestHeader(t *testing.T) {
	n := Names{"X-Mine"}
	for name, want := range map[string]bool{"authorization": true, "Cookie": true, "X-API-Key": true, "x-mine": true, "Accept": false, "X-Request-Id": false} {
		if got := n.Header(name); got != want {
			t.Errorf("Header(%q) = %v, want %v", name, got, want)
		}
	}
}

// Tail reads only a log's end and withholds lines that mention secrets.
func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	big := strings.Repeat("x", 1<<20) + "\nstarting\nAPI_TOKEN=abc\nlistening on :8080\n"
	os.WriteFile(path, []byte(big), 0o600)
	if got, want := Tail(path, 3, 100), "starting\n"+Withheld+"\nlistening on :8080"; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	if Tail(filepath.Join(t.TempDir(), "none"), 3, 100) != "" {
		t.Errorf("a missing file has a tail")
	}
}

// Secrets by other names: a header or query key whose name says it holds
// a secret, a URL's password anywhere in a command, and flags whose name
// says so, spaced or with "=".
func TestSecretsByOtherNames(t *testing.T) {
	for name, want := range map[string]bool{
		"PRIVATE-TOKEN": true, "X-Vendor-Token": true, "X-Amz-Signature": true, "access-token": true, "private_token": true,
		"X-Api-Key": true, "x-session-id": true, "X-Client-Credential": true, "sig": true, "pwd": true,
		"Accept": false, "X-Request-Id": false, "Idempotency-Key": false, "page": false, "--token-file": false, "design": false,
	} {
		if got := Names(nil).Header(name); got != want {
			t.Errorf("Header(%q) = %v, want %v", name, got, want)
		}
	}
	const url = "http://alice:PW1@127.0.0.1:9/x?token=S5&X-Amz-Signature=S6&access-token=S7&private_token=S8&page=2"
	if got, want := URL(url), "http://alice:<redacted>@127.0.0.1:9/x?token=<redacted>&X-Amz-Signature=<redacted>&access-token=<redacted>&private_token=<redacted>&page=2"; got != want {
		t.Errorf("URL = %q,\nwant %q", got, want)
	}
	cmd := `./server --db postgres://app:S19@db.local/app --password S20 --api-token=S21 --name 'x y' --secret "S 22" --port 8080 -p 9`
	want := `./server --db postgres://app:<redacted>@db.local/app --password <redacted> --api-token=<redacted> --name 'x y' --secret <redacted> --port 8080 -p 9`
	if got := Command(cmd); got != want {
		t.Errorf("Command =\n%q\nwant\n%q", got, want)
	}
	args := []string{"run", "--url", url, "--header", "PRIVATE-TOKEN: S11", "--header=X-Vendor-Token: S10", "--monitor-cmd", cmd,
		"--token-file", "tok.txt", "--password", "S23"}
	got := strings.Join(Names(nil).Args(args), " ")
	for _, s := range []string{"PW1", "S5", "S6", "S7", "S8", "S10", "S11", "S19", "S20", "S21", "S 22", "S23"} {
		if strings.Contains(got, s) {
			t.Errorf("Args leaves %q in %s", s, got)
		}
	}
	for _, keep := range []string{"page=2", "tok.txt", "--port 8080", "'x y'"} {
		if !strings.Contains(got, keep) {
			t.Errorf("Args lost %q: %s", keep, got)
		}
	}
}

// One-time passwords, PINs, passphrases and refresh tokens are secrets by
// name, as the other credentials are; pages, pins of a map (a word in a
// name) and designs are not.
func TestSecretNamesOfCodes(t *testing.T) {
	for name, want := range map[string]bool{
		"otp": true, "OTP": true, "pin": true, "passphrase": true, "key_passphrase": true, "passcode": true, "refresh": true,
		"pinned": false, "spinner": false, "page": false, "design": false, "refresh_rate": false,
	} {
		if got := Name(name); got != want {
			t.Errorf("Name(%q) = %v, want %v", name, got, want)
		}
	}
}

// A value is known for a secret by its shape, whatever its name: a JWT,
// an API key with a vendor's prefix, a long random-looking token; ids
// (numbers, UUIDs, hex digests), words and URLs are not.
func TestLooksSecret(t *testing.T) {
	for v, want := range map[string]bool{
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U": true,
		"sk_live_4eC39HqLyjWDarjtT1zdp7dc":                      true,
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a":              true,
		"xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy": true,
		"AKIAIOSFODNN7EXAMPLE":                                  true,
		"Zx8Kq2LmN9pR4tVw7YbC1dFg":                              true,
		"SplxlOBeZQQYbYS6WxSbIA":                                true,
		"6f1c2a9e-3b7d-4c55-9a0e-2d8f41b7c3a1":                  false,
		"9ee2fdb7a1adb423db282574":                              false,
		"da39a3ee5e6b4b0d3255bfef95601890afd80709":              false,
		"1234567890":                         false,
		"application/json":                   false,
		"https://example.com/a/b/c":          false,
		"XMLHttpRequest":                     false,
		"hello world":                        false,
		"2026-01-01T10:00:00.000Z":           false,
		"Mozilla/5.0 (X11; Linux x86_64)":    false,
		"ThisIsALongCamelCaseIdentifierName": false,
	} {
		why, got := LooksSecret(v)
		if got != want || got && why == "" {
			t.Errorf("LooksSecret(%q) = %q, %v, want %v", v, why, got, want)
		}
	}
}
