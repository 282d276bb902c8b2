package k8s

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// bigResult is a result file of at least size bytes, as results.Write
// writes it.
func bigResult(t *testing.T, command string, size int) []byte {
	t.Helper()
	r := &results.Result{Schema: results.Schema, Command: command + strings.Repeat(" ", size), Passed: true}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

// holder plays a coordinator that holds data (the agent package's Hold) behind the API
// server's proxy; serve, when set, replaces the file it sends (a damaged
// copy). It counts the releases.
type holder struct {
	token    string
	data     []byte
	serve    []byte
	released atomic.Int32
	// forbidRelease refuses the release, as an API server would to a
	// user without the right.
	forbidRelease bool
}

func (h *holder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(results.HeldTokenHeader) != h.token {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	sum := sha256.Sum256(h.data)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == results.HeldSumPath:
		json.NewEncoder(w).Encode(results.Held{Bytes: int64(len(h.data)), SHA256: hex.EncodeToString(sum[:])})
	case r.Method == http.MethodGet && r.URL.Path == results.HeldPath:
		if h.serve != nil {
			w.Write(h.serve)
			return
		}
		w.Write(h.data)
	case r.Method == http.MethodGet && r.URL.Path == results.HeldReleasePath:
		if h.forbidRelease {
			http.Error(w, `pods "x" is forbidden: User "u" cannot get resource "pods/proxy"`, http.StatusForbidden)
			return
		}
		h.released.Add(1)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// heldLog is a coordinator's log that prints the log's result, then says
// it holds its result.
func heldLog(t *testing.T) string {
	return resultLog(t, "the log's") + results.HeldLine + " (…) on [::]:7071 for 15m0s\n"
}

// A coordinator that holds its result gives it whole, whatever its size
// (30 MB here, three times a kubelet's log file), checked against its
// SHA-256, and Apply releases it; the log's copy is not used.
func TestApplyFetchesHeldResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{token: options().Token, data: bigResult(t, "the held", 30<<20)}
		r := startProxy(t, t.Context(), fake.NewClientset(), fixedLogs(heldLog(t)), h)
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
		time.Sleep(3 * time.Second) // Apply's next looks at the pods
		synctest.Wait()
		if h.released.Load() != 1 {
			t.Fatalf("releases = %d after the log said the result is held, want 1; progress:\n%s", h.released.Load(), r.progress.String())
		}
		r.finish(batchv1.JobComplete, "")
		r.wait()
		if r.err != nil || r.res == nil || !strings.HasPrefix(r.res.Command, "the held") {
			t.Fatalf("Apply = %v, want the held result", r.err)
		}
		if out := r.progress.String(); !strings.Contains(out, "fetched result.json from pod checkout-coordinator-x2: ") || !strings.Contains(out, "verified") {
			t.Errorf("progress = %q, want it to say the result was fetched and verified", out)
		}
	})
}

// A held result that does not match its checksum (cut or damaged on the
// way) is refused: Apply says why and takes the log's copy, whose own
// checksum held, without waiting for the coordinator's hold to end.
func TestApplyRefusesDamagedHeldResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := bigResult(t, "the held", 1<<20)
		damaged := bytes.Clone(data)
		damaged[len(damaged)/2] = 'x'
		h := &holder{token: options().Token, data: data, serve: damaged}
		r := startProxy(t, t.Context(), fake.NewClientset(), fixedLogs(heldLog(t)), h)
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
		r.wait() // the Job never finishes: the coordinator holds until released
		if r.err != nil || r.res == nil || r.res.Command != "the log's" {
			t.Fatalf("Apply = %+v, %v; want the log's result", r.res, r.err)
		}
		out := r.progress.String()
		for _, want := range []string{"cannot fetch the result the coordinator holds", "not the one held", "comes from the coordinator's log, not from the file it holds"} {
			if !strings.Contains(out, want) {
				t.Errorf("progress = %q, want it to say %q", out, want)
			}
		}
		if got := r.created(); len(got) != 0 {
			t.Errorf("after Apply the namespace holds %q, want nothing", got)
		}
	})
}

// A log that cannot be followed is said at once, not swallowed; Apply
// then fetches the held result without the log's word, and the run ends.
func TestApplySaysFailedFollow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{token: options().Token, data: bigResult(t, "the held", 10)}
		var ready atomic.Bool // the coordinator holds its result
		proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !ready.Load() {
				http.Error(w, "connection refused", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
		logs := func(_ context.Context, _, _ string, follow bool) (io.ReadCloser, error) {
			if follow {
				return nil, io.ErrUnexpectedEOF
			}
			return io.NopCloser(strings.NewReader("ceiling: done\n")), nil
		}
		r := startProxy(t, t.Context(), fake.NewClientset(), logs, proxy)
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
		time.Sleep(3 * time.Second) // Apply's next looks at the pods
		synctest.Wait()
		want := "cannot follow the coordinator's log: unexpected EOF; waiting for job/checkout-coordinator"
		if out := r.progress.String(); !strings.Contains(out, want) {
			t.Fatalf("progress while the run goes on = %q, want it to say %q", out, want)
		}
		ready.Store(true)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		r.finish(batchv1.JobComplete, "")
		r.wait()
		if r.err != nil || r.res == nil || !strings.HasPrefix(r.res.Command, "the held") || h.released.Load() != 1 {
			t.Fatalf("Apply = %v, released %d; want the held result, released once", r.err, h.released.Load())
		}
	})
}

// A user who may get through the pods' proxy but whose release is refused
// still gets the result, said with a warning, and Apply does not wait for
// the coordinator's hold to end: it deletes the run.
func TestApplyUnreleasedHeldResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{token: options().Token, data: bigResult(t, "the held", 10), forbidRelease: true}
		r := startProxy(t, t.Context(), fake.NewClientset(), fixedLogs(heldLog(t)), h)
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
		r.wait() // the Job never finishes: the coordinator holds until its hold ends
		if r.err != nil || r.res == nil || !strings.HasPrefix(r.res.Command, "the held") {
			t.Fatalf("Apply = %v, want the held result", r.err)
		}
		if out := r.progress.String(); !strings.Contains(out, "cannot release the result the coordinator holds") {
			t.Errorf("progress = %q, want it to say the result could not be released", out)
		}
		if got := r.created(); len(got) != 0 {
			t.Errorf("after Apply the namespace holds %q, want nothing", got)
		}
	})
}
