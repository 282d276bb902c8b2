package plan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, target, url, want string
	}{
		{"absolute ignores target", "http://h", "https://other/x", "https://other/x"},
		{"path", "http://h:3000", "/api", "http://h:3000/api"},
		{"target with slash", "http://h:3000/", "/api", "http://h:3000/api"},
		{"target with base path", "http://h/v1", "/users", "http://h/v1/users"},
		{"no leading slash", "http://h/v1/", "users", "http://h/v1/users"},
		{"query only", "http://h", "?q=1", "http://h/?q=1"},
		{"template kept", "http://h", "/u/{{uuid}}", "http://h/u/{{uuid}}"},
		{"no target", "", "http://h/x", "http://h/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{Target: tt.target}
			s := &Scenario{Request: Request{URL: tt.url}}
			if got := p.URL(s); got != tt.want {
				t.Errorf("URL(%q with target %q) = %q, want %q", tt.url, tt.target, got, tt.want)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	p := &Plan{HTTP: HTTP{Headers: map[string]string{"User-Agent": "ceiling", "accept": "*/*", "X-B": "plan"}}}
	s := &Scenario{Request: Request{Headers: map[string]string{"user-agent": "mine", "Authorization": "Bearer t"}}}
	got := p.Headers(s)
	want := [][2]string{
		{"accept", "*/*"},
		{"Authorization", "Bearer t"},
		{"user-agent", "mine"},
		{"X-B", "plan"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Headers() mismatch (-want +got):\n%s", diff)
	}
	if got := (&Plan{}).Headers(&Scenario{}); len(got) != 0 {
		t.Errorf("Headers() with none = %q, want empty", got)
	}
}

func TestDurationAndSteps(t *testing.T) {
	tests := []struct {
		name      string
		load      Load
		wantSteps int
		want      time.Duration
	}{
		{"stairs with default warmup", Load{Rates: []float64{1, 2, 3}}, 3, 3 * (DefaultWarmup + DefaultStep)},
		{"no warmup", Load{Rates: []float64{1, 2}, Step: dur(10 * time.Second), Warmup: durp(0)}, 2, 20 * time.Second},
		{"ramp counts over", Load{Ramp: &Ramp{To: 10, Over: dur(time.Minute)}, Warmup: durp(time.Second)}, 1, 61 * time.Second},
		{"closed", Load{VUs: []int{1, 5}, Step: dur(30 * time.Second)}, 2, 2 * (DefaultWarmup + 30*time.Second)},
		{"saturates", Load{Rates: []float64{1, 2, 3}, Step: dur(1 << 62)}, 3, 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := flagPlan()
			p.Load = tt.load
			if err := p.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if got := p.Steps(); got != tt.wantSteps {
				t.Errorf("Steps() = %d, want %d", got, tt.wantSteps)
			}
			if got := p.Duration(); got != tt.want {
				t.Errorf("Duration() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRequestURL(t *testing.T) {
	p := &Plan{Target: "http://h:3000/v1"}
	step := &Step{Request: Request{URL: "/login"}}
	if got, want := p.RequestURL(&step.Request), "http://h:3000/v1/login"; got != want {
		t.Errorf("RequestURL(%q) = %q, want %q", step.Request.URL, got, want)
	}
	s := &Scenario{Request: Request{URL: "https://o/x"}}
	if got, want := p.URL(s), p.RequestURL(&s.Request); got != want {
		t.Errorf("URL() = %q, want RequestURL()'s %q", got, want)
	}
}

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name string
		plan map[string]string
		req  Request
		want [][2]string
	}{
		{"json sets Content-Type", nil, Request{JSON: map[string]any{"a": 1}}, [][2]string{
			{"Content-Type", "application/json"},
		}},
		{"a request header wins", nil, Request{JSON: []any{}, Headers: map[string]string{"content-type": "application/vnd.x+json"}}, [][2]string{
			{"content-type", "application/vnd.x+json"},
		}},
		{"a plan header wins", map[string]string{"CONTENT-TYPE": "text/plain", "X-A": "1"}, Request{JSON: "x"}, [][2]string{
			{"CONTENT-TYPE", "text/plain"}, {"X-A", "1"},
		}},
		{"no json, no Content-Type", nil, Request{Body: "x", Headers: map[string]string{"X-B": "{{uuid}}"}}, [][2]string{
			{"X-B", "{{uuid}}"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{HTTP: HTTP{Headers: tt.plan}}
			if diff := cmp.Diff(tt.want, p.RequestHeaders(&tt.req)); diff != "" {
				t.Errorf("RequestHeaders() mismatch (-want +got):\n%s", diff)
			}
			s := &Scenario{Request: tt.req}
			if diff := cmp.Diff(tt.want, p.Headers(s)); diff != "" {
				t.Errorf("Headers() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
