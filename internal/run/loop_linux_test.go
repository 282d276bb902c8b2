package run

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/testkit"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Which engine a step runs on, as result.json says: the event loop for a
// plan of fixed requests, and for one whose users the loop drives (a check
// that reads the body, a target that sets cookies); goroutines with
// CEILING_LOOP=off, or a session's Options.Goroutines.
func TestEngineChosen(t *testing.T) {
	for _, tc := range []struct {
		name       string
		contains   string
		cookie     bool
		env        string
		goroutines bool
		want       string
	}{
		{"CEILING_LOOP=off", "", false, "off", false, "goroutines"},
		{"fixed GET", "", false, "", false, "loop"},
		{"a body check", "ok", false, "", false, "loop"},
		{"a cookie", "", true, "", false, "loop"},
		{"Options.Goroutines", "", false, "", true, "goroutines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The switch in the environment is the process's: that case
			// runs alone, before the others run side by side.
			if tc.env != "" {
				t.Setenv("CEILING_LOOP", tc.env)
			} else {
				t.Parallel()
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.cookie {
					http.SetCookie(w, &http.Cookie{Name: "session", Value: "1"})
				}
				w.Write([]byte("ok"))
			}))
			defer srv.Close()
			p := quickPlan(t, "", 300*time.Millisecond, 0, 50)
			p.Target = srv.URL
			p.Scenarios = []plan.Scenario{{Request: plan.Request{URL: "/"}, Expect: plan.Expect{BodyContains: tc.contains}}}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), p, Options{Goroutines: tc.goroutines})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			st := res.Steps[0]
			// 15 arrivals in the window; on a starved machine the last few
			// may go unsent (counted in not_sent, and warned): every one
			// that went out is ok.
			if st.Generator == nil || st.Generator.Engine != tc.want || st.Failed != 0 || st.OK < 8 || st.OK+st.NotSent != 15 {
				t.Errorf("engine %+v, ok %d, failed %d, not sent %d; want %s, 15 ok (or the rest not sent)", st.Generator, st.OK, st.Failed, st.NotSent, tc.want)
			}
		})
	}
}

// The websocket frames of a plan that fits (scenario.Set.LoopFrames) go
// over the event loop, and count as on goroutines: every frame acked, the
// sockets held open; a frame that needs a user's number,
// CEILING_LOOP=off or Options.Goroutines keeps them on goroutines.
func TestFramesEngineChosen(t *testing.T) {
	srv := testkit.NewWebSocket(t, testkit.Echo) // the frame itself is its ack
	for _, tc := range []struct {
		name, send, env string
		goroutines      bool
		want            string
	}{
		{"CEILING_LOOP=off", `{"id":"{{seq}}"}`, "off", false, "goroutines"},
		{"seq", `{"id":"{{seq}}"}`, "", false, "loop"},
		{"a user's number", `{"id":"{{.vu}}-{{seq}}"}`, "", false, "goroutines"},
		{"Options.Goroutines", `{"id":"{{seq}}"}`, "", true, "goroutines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The switch in the environment is the process's: that case
			// runs alone, before the others run side by side.
			if tc.env != "" {
				t.Setenv("CEILING_LOOP", tc.env)
			} else {
				t.Parallel()
			}
			p := quickPlan(t, "", 300*time.Millisecond, 0, 100)
			p.Target = srv.URL
			p.Scenarios = []plan.Scenario{{Name: "widget", WebSocket: &plan.WebSocket{
				URL: testkit.WSURL(srv.URL) + "/", Connections: 4, Send: tc.send, Ack: &plan.Ack{JSON: "id"},
			}}}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), p, Options{Goroutines: tc.goroutines})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			st := res.Steps[0]
			// 30 frames in the window; on a starved machine the last few
			// may go unsent (counted, and warned): every one sent is acked.
			if st.Generator == nil || st.Generator.Engine != tc.want || st.Failed != 0 || st.OK < 15 || st.OK+st.NotSent != 30 {
				t.Errorf("engine %+v, ok %d, failed %d %v, not sent %d; want %s, 30 ok (or the rest not sent)", st.Generator, st.OK, st.Failed, st.Errors, st.NotSent, tc.want)
			}
			if ws := st.WebSocket; ws == nil || ws.Open != 4 || ws.UnknownAcks != 0 {
				t.Errorf("sockets %+v, want 4 open and no unknown acks", ws)
			}
		})
	}
}

// On one processor a plan with mock sinks keeps to goroutines: its sinks
// answer the target from inside ceiling, and the loop would hold the one
// processor they need; on two it gets one loop, leaving a core to them;
// without sinks, a loop per core, or load.loops of them.
func TestEventLoopsPerCore(t *testing.T) {
	p := quickPlan(t, "", 300*time.Millisecond, 0, 50)
	p.Sinks = []plan.Sink{{Name: "slack", Listen: "127.0.0.1:0"}} // eventLoops reads no more of it
	// TestMain asks for one loop a run: this test counts those of each core.
	t.Setenv("CEILING_LOOPS", "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	count := func(first transport.Loop, more []transport.Loop) int {
		if first == nil {
			return 0
		}
		first.Close()
		for _, lp := range more {
			lp.Close()
		}
		return 1 + len(more)
	}
	if n := count(eventLoops(p)); n != 0 {
		t.Errorf("one processor: a plan with sinks got %d event loops, want none", n)
	}
	runtime.GOMAXPROCS(4)
	if n := count(eventLoops(p)); n != 3 {
		t.Errorf("four processors: a plan with sinks got %d event loops, want 3", n)
	}
	p.Sinks = nil
	if n := count(eventLoops(p)); n != 4 {
		t.Errorf("four processors: %d event loops, want 4", n)
	}
	p.Load.Loops = 2
	if n := count(eventLoops(p)); n != 2 {
		t.Errorf("load.loops 2: %d event loops, want 2", n)
	}
}
