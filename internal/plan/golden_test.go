package plan

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/validate")

// TestValidateGolden loads each plan of testdata/validate and compares what
// `ceiling validate` would print (Problems.Error(), empty for a valid plan)
// with its .golden file. Run with -update to rewrite them.
func TestValidateGolden(t *testing.T) {
	plans, err := filepath.Glob(filepath.Join("testdata", "validate", "*.yaml"))
	if err != nil || len(plans) == 0 {
		t.Fatalf("no plans in testdata/validate (%v)", err)
	}
	for _, path := range plans {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got := ""
			if _, err := LoadFile(path); err != nil {
				got = err.Error() + "\n"
			}
			golden := strings.TrimSuffix(path, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file: %v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("LoadFile(%q) problems mismatch (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestParseMix decodes a messaging gateway's plan: a weighted mix of a list, a
// status call and a send flow that logs in, extracts a token and posts JSON
// with a unique idempotency key, for users read from a CSV file.
func TestParseMix(t *testing.T) {
	got, err := LoadFile(filepath.Join("testdata", "mix.yaml"))
	if err != nil {
		t.Fatalf("LoadFile(mix.yaml) = %v, want no error", err)
	}
	want := &Plan{
		File:   filepath.Join("testdata", "mix.yaml"),
		Name:   "gateway-mix",
		Target: "http://127.0.0.1:8080",
		Load: Load{
			Model: Closed, VUs: []int{10, 50}, Step: dur(time.Minute),
			Warmup: durp(DefaultWarmup), Arrival: Uniform,
		},
		HTTP: HTTP{
			Timeout: dur(DefaultTimeout), MaxBodyBytes: DefaultMaxBodyBytes,
			Headers: map[string]string{"User-Agent": "ceiling"},
		},
		Data:      Data{Users: "users.csv"},
		Vars:      map[string]string{"msgid": "{{uuid}}"},
		Scenarios: []Scenario{mixList(), mixStatus(), mixSend()},
		TagLimit:  20,
		Limited:   []int{429},
		SLO:       "p99<300ms, errors<1%",
		Verdict:   defaultVerdict(),
	}
	if diff := cmp.Diff(want, got, ignorePos); diff != "" {
		t.Errorf("LoadFile(mix.yaml) mismatch (-want +got):\n%s", diff)
	}
	wantUsers := []map[string]string{
		{"email": "ana@example.com", "phone": "+15550001", "tenant": "acme"},
		{"email": "bo@example.com", "phone": "+15550002", "tenant": "globex"},
	}
	if diff := cmp.Diff(wantUsers, got.Users()); diff != "" {
		t.Errorf("Users() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"email", "phone", "tenant"}, got.UserColumns()); diff != "" {
		t.Errorf("UserColumns() mismatch (-want +got):\n%s", diff)
	}
	post := &got.Scenarios[2].Steps[1].Request
	wantHeaders := [][2]string{
		{"Authorization", "Bearer {{.token}}"}, {"Content-Type", "application/json"},
		{"Idempotency-Key", "{{uuid}}"}, {"User-Agent", "ceiling"},
	}
	if diff := cmp.Diff(wantHeaders, got.RequestHeaders(post)); diff != "" {
		t.Errorf("RequestHeaders(send's POST) mismatch (-want +got):\n%s", diff)
	}
	if u := got.RequestURL(post); u != "http://127.0.0.1:8080/api/messages" {
		t.Errorf("RequestURL(send's POST) = %q, want http://127.0.0.1:8080/api/messages", u)
	}
}

func mixList() Scenario {
	return Scenario{
		Name: "notifications.list", Weight: 40,
		Tags:    map[string]string{"tenant": "{{.user.tenant}}"},
		Request: Request{Method: "GET", URL: "/api/notifications?user={{.user.email}}"},
		Expect:  Expect{Status: []int{200}, JSON: map[string]any{"ok": true}},
	}
}

func mixStatus() Scenario {
	return Scenario{
		Name: "status", Weight: 30,
		Request: Request{Method: "GET", URL: "/api/status/{{randInt 1 1000}}"},
		Expect: Expect{
			Status: []int{200}, BodyContains: `"state"`,
			Header: map[string]string{"Content-Type": "application/json"},
		},
	}
}

func mixSend() Scenario {
	return Scenario{
		Name: "send", Weight: 30,
		Tags: map[string]string{"tenant": "{{.user.tenant}}"},
		Steps: []Step{
			{
				Name: "login",
				Request: Request{
					Method: "POST", URL: "/login",
					JSON: map[string]any{"email": "{{.user.email}}", "password": "0123"},
				},
				Expect:  Expect{Status: []int{200}},
				Extract: map[string]Extract{"token": {JSON: "data.token"}},
			},
			{
				Name: "POST /api/messages",
				Request: Request{
					Method: "POST", URL: "/api/messages",
					Headers: map[string]string{"Authorization": "Bearer {{.token}}", "Idempotency-Key": "{{uuid}}"},
					JSON: map[string]any{
						"id": "{{.msgid}}", "to": "{{.user.phone}}", "text": "hello",
						"priority": int64(2), "urgent": false, "meta": nil,
						"parts": []any{"a", int64(1), 2.5},
					},
				},
				Expect: Expect{
					Status:    []int{200, 202},
					JSON:      map[string]any{"status": "queued", "data.count": int64(1)},
					BodyRegex: `"id":"[0-9a-f-]+"`,
				},
			},
		},
	}
}
