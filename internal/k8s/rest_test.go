package k8s

// These tests check what restCluster, the binary's Cluster, sends and how
// it reads the answers, against apiServer: a handler on loopback that
// answers a few paths as the Kubernetes API does. It is not a cluster
// either (nothing runs; its one pod and its Jobs' conditions are made up),
// and it checks the paths, verbs, query parameters and bodies Apply relies
// on, not everything a real API server would.

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// apiServer keeps the objects created through it by path, answers a list
// of pods with one running coordinator's, a Job with a Complete
// condition, and a pod's log with log.
type apiServer struct {
	t       *testing.T
	url     string
	log     string
	held    http.Handler // answers the pods' proxy (a coordinator that holds its result); nil: 503
	mu      sync.Mutex
	objects map[string]map[string]any // path of the object → its JSON
	seen    []string                  // "METHOD path?query" of every request
	bodies  map[string]string         // "METHOD path" → the request's body
}

func newAPIServer(t *testing.T, log string) (*apiServer, *restCluster) {
	t.Helper()
	a := &apiServer{t: t, log: log, objects: map[string]map[string]any{}, bodies: map[string]string{}}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	a.url = srv.URL
	c, err := newREST(&rest.Config{Host: srv.URL, QPS: -1}) // no client-side rate limit
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	a.seen = append(a.seen, r.Method+" "+r.URL.RequestURI())
	a.bodies[r.Method+" "+r.URL.Path] = string(body)
	path, resource := r.URL.Path, r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	switch {
	case strings.Contains(path, ":7071/proxy/"):
		if a.held == nil {
			a.status(w, apierrors.NewServiceUnavailable("no endpoints available"))
			return
		}
		r.URL.Path = path[strings.Index(path, "/proxy/")+len("/proxy"):]
		a.held.ServeHTTP(w, r)
	case r.Method == http.MethodPost:
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			a.status(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		name, _ := obj["metadata"].(map[string]any)["name"].(string)
		if _, ok := a.objects[path+"/"+name]; ok {
			a.status(w, apierrors.NewAlreadyExists(schema.GroupResource{Resource: resource}, name))
			return
		}
		a.objects[path+"/"+name] = obj
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	case r.Method == http.MethodDelete:
		if _, ok := a.objects[path]; !ok {
			a.status(w, apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, resource))
			return
		}
		delete(a.objects, path)
		a.json(w, &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess})
	case strings.HasSuffix(path, "/log"):
		io.WriteString(w, a.log)
	case strings.HasSuffix(path, "/pods"):
		a.json(w, &corev1.PodList{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
			Items: []corev1.Pod{{
				ObjectMeta: metav1.ObjectMeta{Name: "checkout-coordinator-x2", Labels: map[string]string{labelComponent: "coordinator"}},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning},
			}},
		})
	case strings.Contains(path, "/jobs/"):
		if _, ok := a.objects[path]; !ok {
			a.status(w, apierrors.NewNotFound(schema.GroupResource{Group: "batch", Resource: "jobs"}, resource))
			return
		}
		a.json(w, &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Name: resource},
			Status:     batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
		})
	default:
		a.status(w, apierrors.NewNotFound(schema.GroupResource{Resource: path}, ""))
	}
}

func (a *apiServer) json(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		a.t.Error(err)
	}
}

// status answers an error as the API does: a Status object with its code.
func (a *apiServer) status(w http.ResponseWriter, err *apierrors.StatusError) {
	s := err.ErrStatus
	s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	json.NewEncoder(w).Encode(&s)
}

func TestRESTClusterApply(t *testing.T) {
	a, c := newAPIServer(t, resultLog(t, "from the log"))
	a.held = &holder{token: options().Token, data: bigResult(t, "through the REST client", 10)}
	var progress strings.Builder
	res, err := Apply(t.Context(), c, options(), &progress)
	if err != nil || res == nil || !strings.HasPrefix(res.Command, "through the REST client") {
		t.Fatalf("Apply = %+v, %v; want the result the coordinator held, fetched through the pods' proxy", res, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	const core, batch = "/api/v1/namespaces/loadtest/", "/apis/batch/v1/namespaces/loadtest/"
	const networking = "/apis/networking.k8s.io/v1/namespaces/loadtest/"
	want := []string{
		"POST " + core + "secrets",
		"POST " + core + "secrets",
		"POST " + core + "services",
		"POST " + networking + "networkpolicies",
		"POST " + batch + "jobs",
		"POST " + batch + "jobs",
		"GET " + core + "pods?labelSelector=app.kubernetes.io%2Finstance%3Dcheckout",
		"GET " + core + "pods/checkout-coordinator-x2/log?follow=true",
		"GET " + core + "pods/checkout-coordinator-x2:7071/proxy/v1/result/sum",
		"GET " + core + "pods/checkout-coordinator-x2:7071/proxy/v1/result",
		"GET " + core + "pods/checkout-coordinator-x2:7071/proxy/v1/result/release",
		"GET " + batch + "jobs/checkout-coordinator",
		"DELETE " + batch + "jobs/checkout-coordinator",
		"DELETE " + batch + "jobs/checkout-agents",
		"DELETE " + networking + "networkpolicies/checkout-agents",
		"DELETE " + core + "services/checkout-agents",
		"DELETE " + core + "secrets/checkout-token",
		"DELETE " + core + "secrets/checkout-plan",
	}
	if !slices.Equal(a.seen, want) {
		t.Errorf("requests:\n  %s\nwant\n  %s", strings.Join(a.seen, "\n  "), strings.Join(want, "\n  "))
	}
	if len(a.objects) != 0 {
		t.Errorf("after Apply the server holds %d objects, want none", len(a.objects))
	}
	var job batchv1.Job
	if err := json.Unmarshal([]byte(a.bodies["POST "+batch+"jobs"]), &job); err != nil || job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "checkout-coordinator" {
		t.Errorf("the last Job sent = %s/%s %q, %v; want batch/v1 Job checkout-coordinator", job.APIVersion, job.Kind, job.Name, err)
	}
	if got := a.bodies["DELETE "+batch+"jobs/checkout-agents"]; !strings.Contains(got, `"propagationPolicy":"Background"`) {
		t.Errorf("a Job's deletion sent %q, want background propagation (its pods go with it)", got)
	}
}

func TestRESTClusterErrors(t *testing.T) {
	a, c := newAPIServer(t, "")
	ctx := t.Context()
	cm := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "checkout-plan"}}
	if err := c.Create(ctx, "loadtest", cm); err != nil {
		t.Fatalf("Create = %v", err)
	}
	if err := c.Create(ctx, "loadtest", cm); !apierrors.IsAlreadyExists(err) {
		t.Errorf("Create of an object that exists = %v, want AlreadyExists", err)
	}
	if err := c.Create(ctx, "loadtest", &corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "not an object ceiling k8s creates") {
		t.Errorf("Create of a pod = %v, want it refused", err)
	}
	for _, r := range []string{"secrets", "jobs"} {
		if err := c.Delete(ctx, r, "loadtest", "gone"); !apierrors.IsNotFound(err) {
			t.Errorf("Delete of %s/gone = %v, want NotFound", r, err)
		}
	}
	if _, err := c.Job(ctx, "loadtest", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("Job(gone) = %v, want NotFound", err)
	}
	rc, err := c.Log(ctx, "loadtest", "p", false)
	if err != nil {
		t.Fatalf("Log = %v", err)
	}
	rc.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if last := a.seen[len(a.seen)-1]; last != "GET /api/v1/namespaces/loadtest/pods/p/log" {
		t.Errorf("Log without follow asked %q, want the pod's log without follow=true", last)
	}
}

// TestNoTypedClientset keeps client-go's typed clientset (every group of
// the API: some 40 MB of the binary) out of the package's own files: only
// its tests may import it, through fakeCluster.
func TestNoTypedClientset(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, "k8s.io/client-go/kubernetes") {
				t.Errorf("%s imports %s: the binary talks to the API through restCluster", name, p)
			}
		}
	}
}
