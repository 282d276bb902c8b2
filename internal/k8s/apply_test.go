package k8s

// These tests run Apply against client-go's fake clientset (through
// fakeCluster, fake_test.go): an object store, not a cluster. Nothing
// schedules, runs or deletes pods and no Job controller sets conditions;
// the tests play those parts themselves (creating the coordinator's pod,
// marking its Job complete) to check how Apply reacts to what a cluster
// would report. They say nothing about whether a real cluster accepts the
// objects and runs them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ceiling-dev/ceiling/internal/results"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// resultLog is a coordinator's log: progress lines, the result, a last line.
func resultLog(t *testing.T, command string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("ceiling: waiting for 3 agents\nceiling: step 1/2 at 50/s: p99 12ms\n")
	if err := results.WriteLog(&b, &results.Result{Schema: results.Schema, Command: command, Passed: true}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("ceiling: result: /tmp/result.json\n")
	return b.String()
}

// logSource opens a pod's log, as Cluster.Log does.
type logSource func(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error)

// fixedLogs answers every log request with log.
func fixedLogs(log string) logSource {
	return func(context.Context, string, string, bool) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	}
}

// trial is one Apply in a goroutine of a synctest bubble, against a fake
// clientset.
type trial struct {
	t        *testing.T
	client   *fake.Clientset
	o        Options
	progress bytes.Buffer
	res      *results.Result
	err      error
	done     chan struct{}
}

// start runs Apply with logs as the log source, and returns once it waits
// for the cluster (every goroutine of the bubble is blocked).
func start(t *testing.T, ctx context.Context, client *fake.Clientset, logs logSource) *trial {
	t.Helper()
	return startProxy(t, ctx, client, logs, nil)
}

// startProxy is start with proxy answering for the pods (fakeCluster.proxy).
func startProxy(t *testing.T, ctx context.Context, client *fake.Clientset, logs logSource, proxy http.Handler) *trial {
	t.Helper()
	r := &trial{t: t, client: client, o: options(), done: make(chan struct{})}
	a := &applier{cluster: fakeCluster{client: client, logs: logs, proxy: proxy}, progress: &r.progress, poll: time.Second, cleanup: 30 * time.Second}
	go func() {
		defer close(r.done)
		r.res, r.err = a.apply(ctx, r.o)
	}()
	synctest.Wait()
	return r
}

// wait waits for Apply to return.
func (r *trial) wait() {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(time.Hour): // fake time: only a stuck Apply gets here
		r.t.Fatal("Apply did not return")
	}
}

// pod plays the Job controller and the kubelet: it creates a pod of the
// given component in phase, waiting for reason when not empty.
func (r *trial) pod(name, component string, phase corev1.PodPhase, reason string) {
	r.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.o.Namespace, Labels: r.o.labels(component)},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if reason != "" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: component,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pull access denied"}}}}
	}
	if _, err := r.client.CoreV1().Pods(r.o.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

// finish plays the Job controller: the coordinator's Job ends as kind says.
func (r *trial) finish(kind batchv1.JobConditionType, reason string) {
	r.t.Helper()
	jobs := r.client.BatchV1().Jobs(r.o.Namespace)
	job, err := jobs.Get(context.Background(), r.o.coordinatorName(), metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: kind, Status: corev1.ConditionTrue, Reason: reason, Message: "from the test"})
	if _, err := jobs.UpdateStatus(context.Background(), job, metav1.UpdateOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

// created returns the kinds and names of the objects in the namespace,
// pods left out (the fake has no garbage collector to delete a Job's).
func (r *trial) created() []string {
	r.t.Helper()
	ctx, ns := context.Background(), r.o.Namespace
	var names []string
	cms, err1 := r.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}) // none: ceiling k8s creates none
	secrets, err2 := r.client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	services, err3 := r.client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	jobs, err4 := r.client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	policies, err5 := r.client.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		r.t.Fatal(err)
	}
	for _, o := range cms.Items {
		names = append(names, "configmap/"+o.Name)
	}
	for _, o := range secrets.Items {
		names = append(names, "secret/"+o.Name)
	}
	for _, o := range services.Items {
		names = append(names, "service/"+o.Name)
	}
	for _, o := range jobs.Items {
		names = append(names, "job/"+o.Name)
	}
	for _, o := range policies.Items {
		names = append(names, "networkpolicy/"+o.Name)
	}
	slices.Sort(names)
	return names
}

var all = []string{"job/checkout-agents", "job/checkout-coordinator", "networkpolicy/checkout-agents", "secret/checkout-plan", "secret/checkout-token", "service/checkout-agents"}

func TestApplyReadsTheResultAndDeletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		r := start(t, t.Context(), client, fixedLogs(resultLog(t, "the coordinator's")))
		if got := r.created(); !slices.Equal(got, all) {
			t.Fatalf("while running, the namespace holds %q, want %q", got, all)
		}
		var order []string
		for _, a := range client.Actions() {
			if a.GetVerb() == "create" {
				order = append(order, a.GetResource().Resource)
			}
		}
		if want := []string{"secrets", "secrets", "services", "networkpolicies", "jobs", "jobs"}; !slices.Equal(order, want) {
			t.Errorf("created %q in this order, want %q", order, want)
		}

		r.pod("checkout-agents-0-x1", "agent", corev1.PodPending, "")
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
		r.finish(batchv1.JobComplete, "")
		r.wait()

		if r.err != nil || r.res == nil || r.res.Command != "the coordinator's" {
			t.Fatalf("Apply = %+v, %v; want the result from the log", r.res, r.err)
		}
		if got := r.created(); len(got) != 0 {
			t.Errorf("after Apply the namespace holds %q, want nothing", got)
		}
		out := r.progress.String()
		for _, want := range []string{"step 1/2 at 50/s", "ceiling: result: /tmp/result.json", "created secret/checkout-plan", "deleted "} {
			if !strings.Contains(out, want) {
				t.Errorf("progress = %q, want it to say %q", out, want)
			}
		}
		if strings.Contains(out, results.LogBegin) || strings.Contains(out, `"schema"`) {
			t.Errorf("progress = %q, want the result's JSON left out", out)
		}
	})
}

// A coordinator exits 1 when a threshold fails: its Job fails, but the
// result it printed is the answer.
func TestApplyKeepsTheResultOfAFailedCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, t.Context(), fake.NewClientset(), fixedLogs(resultLog(t, "threshold failed")))
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodFailed, "")
		r.finish(batchv1.JobFailed, "BackoffLimitExceeded")
		r.wait()
		if r.err != nil || r.res == nil || r.res.Command != "threshold failed" {
			t.Errorf("Apply = %+v, %v; want the result from the log", r.res, r.err)
		}
	})
}

func TestApplyFailedCoordinatorWithoutAResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := "ceiling: waiting for 3 agents\nceiling: agent checkout-agents-1: no such host\n"
		r := start(t, t.Context(), fake.NewClientset(), fixedLogs(log))
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodFailed, "")
		r.finish(batchv1.JobFailed, "BackoffLimitExceeded")
		r.wait()
		if r.err == nil {
			t.Fatalf("Apply = %+v, nil; want an error", r.res)
		}
		for _, want := range []string{"job/checkout-coordinator, failed (BackoffLimitExceeded", "no result in the log", "  ceiling: agent checkout-agents-1: no such host"} {
			if !strings.Contains(r.err.Error(), want) {
				t.Errorf("Apply = %v, want it to say %q", r.err, want)
			}
		}
		if got := r.created(); len(got) != 0 {
			t.Errorf("after Apply the namespace holds %q, want nothing", got)
		}
	})
}

// A follow cut short (the kubelet rotating the log, a connection lost) is
// read again whole once the Job has finished.
func TestApplyRereadsACutLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		whole := resultLog(t, "read twice")
		calls := 0
		logs := func(_ context.Context, _, _ string, follow bool) (io.ReadCloser, error) {
			calls++
			if follow {
				return io.NopCloser(strings.NewReader(whole[:len(whole)/2])), nil
			}
			return io.NopCloser(strings.NewReader(whole)), nil
		}
		r := start(t, t.Context(), fake.NewClientset(), logs)
		r.pod("checkout-coordinator-x2", "coordinator", corev1.PodSucceeded, "")
		r.finish(batchv1.JobComplete, "")
		r.wait()
		if r.err != nil || r.res == nil || r.res.Command != "read twice" || calls != 2 {
			t.Errorf("Apply = %+v, %v after %d reads of the log; want the result after 2", r.res, r.err, calls)
		}
	})
}

func TestApplyCancelled(t *testing.T) {
	t.Run("waiting for the coordinator's pod", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			r := start(t, ctx, fake.NewClientset(), fixedLogs(""))
			cancel()
			r.wait()
			checkCancelled(t, r)
		})
	})
	t.Run("following the log", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			logs := func(ctx context.Context, _, _ string, _ bool) (io.ReadCloser, error) {
				return io.NopCloser(io.MultiReader(strings.NewReader("ceiling: step 1\n"), blocked{ctx})), nil
			}
			r := start(t, ctx, fake.NewClientset(), logs)
			r.pod("checkout-coordinator-x2", "coordinator", corev1.PodRunning, "")
			time.Sleep(2 * time.Second) // Apply sees the pod and follows its log
			synctest.Wait()
			cancel()
			r.wait()
			checkCancelled(t, r)
			if !strings.Contains(r.progress.String(), "ceiling: step 1\n") {
				t.Errorf("progress = %q, want the log's first line", r.progress.String())
			}
		})
	})
}

func checkCancelled(t *testing.T, r *trial) {
	t.Helper()
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("Apply = %v, want context.Canceled", r.err)
	}
	if got := r.created(); len(got) != 0 {
		t.Errorf("after a cancelled Apply the namespace holds %q, want nothing", got)
	}
}

// blocked is a log that never says more: it blocks until ctx is done.
type blocked struct{ ctx context.Context }

func (b blocked) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func TestApplyStopsAtAPodThatCannotStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, t.Context(), fake.NewClientset(), fixedLogs(""))
		r.pod("checkout-agents-0-x1", "agent", corev1.PodPending, "ImagePullBackOff")
		r.wait()
		if r.err == nil || !strings.Contains(r.err.Error(), "pod checkout-agents-0-x1 cannot start its container agent: ImagePullBackOff: pull access denied") {
			t.Errorf("Apply = %v, want the pod that cannot start", r.err)
		}
		if got := r.created(); len(got) != 0 {
			t.Errorf("after Apply the namespace holds %q, want nothing", got)
		}
	})
}

func TestApplyNotesAnUnscheduledPodOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := start(t, ctx, fake.NewClientset(), fixedLogs(""))
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "checkout-agents-2-x3", Namespace: r.o.Namespace, Labels: r.o.labels("agent")},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/2 nodes have enough cpu",
			}}},
		}
		if _, err := r.client.CoreV1().Pods(r.o.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		cancel()
		r.wait()
		if n := strings.Count(r.progress.String(), "pod checkout-agents-2-x3 is not scheduled yet: 0/2 nodes have enough cpu"); n != 1 {
			t.Errorf("progress = %q: the unscheduled pod noted %d times, want once", r.progress.String(), n)
		}
	})
}

func TestApplyLeavesAnotherRunAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "checkout-plan", Namespace: "loadtest"}}
		r := start(t, t.Context(), fake.NewClientset(theirs), fixedLogs(""))
		r.wait()
		if r.err == nil || !strings.Contains(r.err.Error(), "already exists") || !strings.Contains(r.err.Error(), "kubectl -n loadtest delete job,service,secret,networkpolicy -l app.kubernetes.io/instance=checkout") {
			t.Errorf("Apply = %v, want an error saying the run exists and how to delete it", r.err)
		}
		if got := r.created(); !slices.Equal(got, []string{"secret/checkout-plan"}) {
			t.Errorf("after Apply the namespace holds %q, want the Secret that was there, alone", got)
		}
	})
}

// An object Apply could not delete is an error, or a warning when there
// is a result: the result stands, and so do the objects left.
func TestApplySaysWhatItCouldNotDelete(t *testing.T) {
	for name, withResult := range map[string]bool{"with a result": true, "cancelled": false} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := fake.NewClientset()
				client.PrependReactor("delete", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.(k8stesting.DeleteAction).GetName() != "checkout-token" {
						return false, nil, nil
					}
					return true, nil, errors.New("forbidden")
				})
				ctx, cancel := context.WithCancel(t.Context())
				r := start(t, ctx, client, fixedLogs(resultLog(t, "x")))
				if withResult {
					r.pod("checkout-coordinator-x2", "coordinator", corev1.PodSucceeded, "")
					r.finish(batchv1.JobComplete, "")
				} else {
					cancel()
				}
				r.wait()
				cancel()
				said := r.progress.String()
				if !withResult {
					said = fmt.Sprint(r.err)
				}
				if (r.res != nil) != withResult || !strings.Contains(said, "delete secret/checkout-token: forbidden") || !strings.Contains(said, "kubectl -n loadtest delete") {
					t.Errorf("Apply = %v, %v with progress %q; want the result (when there is one), and the object it could not delete with the command that does",
						r.res, r.err, r.progress.String())
				}
				if got := r.created(); !slices.Equal(got, []string{"secret/checkout-token"}) {
					t.Errorf("after Apply the namespace holds %q, want only the secret it could not delete", got)
				}
			})
		})
	}
}

// TestApplyReadsThePodsLog goes through the fake clientset's pods/log
// (fakeCluster without logs of its own), which answers "fake logs" unless
// a reactor gives the body: a real kubelet's stream is not exercised here,
// and restCluster's request for it is checked in rest_test.go.
func TestApplyReadsThePodsLog(t *testing.T) {
	for name, log := range map[string]string{"the coordinator's log": resultLog(t, "through pods/log"), "fake logs": ""} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := fake.NewClientset()
				if log != "" {
					client.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
						return a.GetSubresource() == "log", &runtime.Unknown{Raw: []byte(log)}, nil
					})
				}
				o := options()
				var res *results.Result
				var err error
				done := make(chan struct{})
				go func() {
					defer close(done)
					res, err = Apply(t.Context(), fakeCluster{client: client}, o, io.Discard)
				}()
				synctest.Wait()
				r := &trial{t: t, client: client, o: o, done: done}
				r.pod("checkout-coordinator-x2", "coordinator", corev1.PodSucceeded, "")
				r.finish(batchv1.JobComplete, "")
				r.wait()
				switch {
				case log != "" && (err != nil || res.Command != "through pods/log"):
					t.Errorf("Apply = %+v, %v; want the result from pods/log", res, err)
				case log == "" && (err == nil || !strings.Contains(err.Error(), "no result in the log") || !strings.Contains(err.Error(), "  fake logs")):
					t.Errorf("Apply = %v, want no result found in %q", err, "fake logs")
				}
			})
		})
	}
}
