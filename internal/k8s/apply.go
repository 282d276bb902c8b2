package k8s

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Apply runs o's plan in the cluster c: it creates the objects of
// Manifests (in o.Namespace, or "default"), waits for the coordinator's pod to
// start, copies its log to progress line by line (all but the result),
// waits for its Job to finish and reads the result from the log. It then
// deletes every object it created, the pods with their Jobs, also when it
// fails or ctx is cancelled (with a context of its own, bounded to 30s);
// objects that were there before are never touched. An object it could
// not delete is an error, or a warning on progress when there is a result.
//
// A coordinator that printed a result returns it even when its Job failed:
// `ceiling run` exits 1 when a threshold fails, and the result says so.
// A coordinator that printed none is an error with the last lines of its
// log. A pod that cannot start (an image that cannot be pulled, a missing
// volume) fails Apply as soon as it shows; a pod that waits for room on a
// node is noted on progress once, and waited for: ctx bounds the wait.
func Apply(ctx context.Context, c Cluster, o Options, progress io.Writer) (*results.Result, error) {
	return newApplier(c, progress).apply(ctx, o)
}

// newApplier returns an applier of c, its progress on progress.
func newApplier(c Cluster, progress io.Writer) *applier {
	return &applier{cluster: c, progress: progress, poll: time.Second, cleanup: 30 * time.Second}
}

// applier is one Apply.
type applier struct {
	cluster  Cluster
	progress io.Writer
	poll     time.Duration // between two looks at the pods or the Job
	cleanup  time.Duration // bounds the deletion
	created  []created

	followed bool            // the coordinator's log was followed to its end
	fetched  *results.Result // the result the coordinator held, fetched
	raw      []byte          // the result's file, as the coordinator wrote it
	logRaw   []byte          // the file, as the log had it
	fetchErr error           // why the last fetch failed
	// unreleased: the result was fetched, not released; the coordinator
	// holds it until its hold ends, and Apply does not wait for that.
	unreleased bool
	stopFollow context.CancelFunc // ends the log's follow
}

// created is an object Apply created: its kind as kubectl names it, its
// resource as the API does, and its name.
type created struct {
	kind, resource, name string
}

func (a *applier) apply(ctx context.Context, o Options) (res *results.Result, err error) {
	o.Namespace = cmp.Or(o.Namespace, metav1.NamespaceDefault)
	if a.progress == nil {
		a.progress = io.Discard
	}
	m, err := Manifests(o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := a.deleteAll(ctx, &o); derr != nil && res != nil {
			fmt.Fprintf(a.progress, "ceiling: warning: %v\n", derr) // the result stands
		} else {
			err = errors.Join(err, derr)
		}
	}()
	if err := a.createAll(ctx, &o, m); err != nil {
		return nil, err
	}
	pod, err := a.coordinatorPod(ctx, &o)
	if err != nil {
		return nil, err
	}
	tail := &echo{w: a.progress}
	if o.hold() > 0 {
		tail.held = func() {
			if a.fetch(ctx, &o, pod, 3, true); a.unreleased {
				a.stopFollow() // the coordinator would hold until its hold ends
			}
		}
	}
	res = a.follow(ctx, &o, pod, tail)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("apply: %w", ctx.Err())
	}
	job, err := a.finished(ctx, &o, pod, res != nil)
	if err != nil {
		return nil, err
	}
	switch {
	case a.fetched != nil:
		return a.fetched, nil
	case res != nil:
		if a.fetchErr != nil {
			fmt.Fprintf(a.progress, "ceiling: the result comes from the coordinator's log, not from the file it holds\n")
		}
		a.raw = a.logRaw
		return res, nil
	}
	// The whole log, once more: a follow can be cut short.
	res, logErr := a.readLog(ctx, o.Namespace, pod, false, &echo{w: io.Discard})
	if res != nil {
		return res, nil
	}
	why := "finished without a result"
	if c := failed(job); c != nil {
		why = fmt.Sprintf("failed (%s: %s)", c.Reason, c.Message)
	}
	return nil, fmt.Errorf("apply: the coordinator, job/%s, %s: %w; the last lines of its log:\n%s",
		o.coordinatorName(), why, logErr, tail.last())
}

// follow copies the coordinator's log to progress while its pod runs and
// returns the result printed in it, if any. A log it cannot open, or one
// cut before the pod's end, is said at once: Apply then waits for the Job
// (and fetches the held result) without it.
func (a *applier) follow(ctx context.Context, o *Options, pod string, tail *echo) *results.Result {
	followCtx, stop := context.WithCancel(ctx)
	defer stop()
	a.stopFollow = stop
	rc, err := a.cluster.Log(followCtx, o.Namespace, pod, true)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(a.progress, "ceiling: cannot follow the coordinator's log: %v; waiting for job/%s\n", err, o.coordinatorName())
		}
		return nil
	}
	defer rc.Close()
	r := &readErr{r: rc}
	res, raw, _ := results.ReadLogFile(io.TeeReader(r, tail)) // without one, the log is read again at the end
	if res != nil {
		a.logRaw = raw
	}
	tail.flush()
	switch {
	case r.err != nil && followCtx.Err() == nil:
		fmt.Fprintf(a.progress, "ceiling: the coordinator's log was cut: %v; waiting for job/%s\n", r.err, o.coordinatorName())
	case r.err == nil:
		a.followed = true
	}
	return res
}

// readErr is a reader that keeps the error of its reader, but io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// fetch fetches the result the coordinator holds (the agent package's Hold) through the
// API server's proxy to its pod, up to tries times a poll apart (the log
// may say the result is whole a moment before the coordinator serves
// it): its size and SHA-256,
// the file, checked against them, then releases it, so that the
// coordinator ends. It keeps the result in a.fetched, or the last error in
// a.fetchErr, which it says on progress with say.
func (a *applier) fetch(ctx context.Context, o *Options, pod string, tries int, say bool) {
	for i := 0; i < tries && a.fetched == nil; i++ {
		if i > 0 && a.wait(ctx) != nil {
			break
		}
		a.fetchErr = a.fetchOnce(ctx, o, pod)
	}
	if a.fetchErr != nil && say {
		fmt.Fprintf(a.progress, "ceiling: cannot fetch the result the coordinator holds: %v\n", a.fetchErr)
	}
}

func (a *applier) fetchOnce(ctx context.Context, o *Options, pod string) error {
	header := http.Header{results.HeldTokenHeader: {o.Token}}
	get := func(path string) ([]byte, error) {
		rc, err := a.cluster.Proxy(ctx, o.Namespace, pod, results.HeldPort, http.MethodGet, path, header)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	data, err := get(results.HeldSumPath)
	if err != nil {
		return fmt.Errorf("fetch the result's checksum from pod %s: %w", pod, err)
	}
	var held results.Held
	if err := json.Unmarshal(data, &held); err != nil {
		return fmt.Errorf("fetch the result's checksum from pod %s: %w", pod, err)
	}
	if data, err = get(results.HeldPath); err != nil {
		return fmt.Errorf("fetch the result from pod %s: %w", pod, err)
	}
	if err := held.Check(data); err != nil {
		return fmt.Errorf("fetch the result from pod %s: %w", pod, err)
	}
	res, err := results.Decode(data)
	if err != nil {
		return fmt.Errorf("fetch the result from pod %s: %w", pod, err)
	}
	a.fetched, a.raw = res, data
	fmt.Fprintf(a.progress, "ceiling: fetched result.json from pod %s: %d bytes, SHA-256 %s verified\n", pod, held.Bytes, held.SHA256)
	if _, err := get(results.HeldReleasePath); err != nil {
		// The coordinator holds it until its hold ends: Apply stops
		// following its log and deletes its Job.
		a.unreleased = true
		fmt.Fprintf(a.progress, "ceiling: warning: cannot release the result the coordinator holds: %v\n", err)
	}
	return nil
}

// createAll creates m's objects in order, remembering each for deleteAll,
// and stops at the first that fails.
func (a *applier) createAll(ctx context.Context, o *Options, m *Objects) error {
	var err error
	for _, obj := range m.List() {
		if err = a.create(ctx, o.Namespace, obj); err != nil {
			break
		}
	}
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("apply: %w (another run named %s is in namespace %s: delete it with %s, or choose another name)",
			err, o.Name, o.Namespace, o.deleteCommand())
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	fmt.Fprintf(a.progress, "ceiling: created %s in namespace %s\n", a.names(), o.Namespace)
	return nil
}

// create creates obj in namespace and remembers it for deleteAll.
func (a *applier) create(ctx context.Context, namespace string, obj runtime.Object) error {
	resource, kind := kindOf(obj)
	name := obj.(metav1.Object).GetName() // every object of Manifests
	if err := a.cluster.Create(ctx, namespace, obj); err != nil {
		return fmt.Errorf("create %s/%s: %w", kind, name, err)
	}
	a.created = append(a.created, created{kind: kind, resource: resource, name: name})
	return nil
}

// names lists the created objects as kubectl names them: job/NAME.
func (a *applier) names() string {
	names := make([]string, len(a.created))
	for i, c := range a.created {
		names[i] = c.kind + "/" + c.name
	}
	return strings.Join(names, ", ")
}

// deleteAll deletes what Apply created, last first, with a context of its
// own: ctx may be cancelled already, and the objects must go all the same.
// Jobs are deleted with background propagation (Cluster.Delete): their
// pods go after them. An object already gone is no error.
func (a *applier) deleteAll(ctx context.Context, o *Options) error {
	if len(a.created) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cleanup)
	defer cancel()
	var errs []error
	for _, c := range slices.Backward(a.created) {
		err := a.cluster.Delete(ctx, c.resource, o.Namespace, c.name)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s/%s: %w", c.kind, c.name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("apply: %w (delete what is left with %s)", errors.Join(errs...), o.deleteCommand())
	}
	fmt.Fprintf(a.progress, "ceiling: deleted %s\n", a.names())
	a.created = nil
	return nil
}

// deleteCommand is the kubectl command that deletes o's objects.
func (o *Options) deleteCommand() string {
	kinds := "job,service,secret"
	if o.NetworkPolicy {
		kinds += ",networkpolicy"
	}
	return o.kubectl("delete " + kinds + " -l " + labelInstance + "=" + o.Name)
}

// kubectl returns the kubectl command of args in o's namespace.
func (o *Options) kubectl(args string) string {
	if o.Namespace != "" {
		return "kubectl -n " + o.Namespace + " " + args
	}
	return "kubectl " + args
}

// coordinatorPod waits until the coordinator's pod has started (or
// already ended), and returns its name. While it waits, it fails when a
// pod of the run cannot start or the coordinator's Job failed, and notes
// once each pod that waits to be scheduled.
func (a *applier) coordinatorPod(ctx context.Context, o *Options) (string, error) {
	selector := labels.SelectorFromSet(map[string]string{labelInstance: o.Name}).String()
	noted := map[string]bool{}
	for {
		pods, err := a.cluster.Pods(ctx, o.Namespace, selector)
		if err != nil {
			return "", fmt.Errorf("apply: list the pods: %w", err)
		}
		for _, p := range pods {
			if err := stuck(&p); err != nil {
				return "", fmt.Errorf("apply: %w", err)
			}
			if why := unscheduled(&p); why != "" && !noted[p.Name] {
				noted[p.Name] = true
				fmt.Fprintf(a.progress, "ceiling: pod %s is not scheduled yet: %s\n", p.Name, why)
			}
			if p.Labels[labelComponent] == "coordinator" && p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
				return p.Name, nil
			}
		}
		job, err := a.cluster.Job(ctx, o.Namespace, o.coordinatorName())
		if err != nil {
			return "", fmt.Errorf("apply: %w", err)
		}
		if c := failed(job); c != nil {
			return "", fmt.Errorf("apply: the coordinator, job/%s, failed before it started (%s: %s)", job.Name, c.Reason, c.Message)
		}
		if err := a.wait(ctx); err != nil {
			return "", err
		}
	}
}

// stuck returns why a pod's container cannot start, or nil. Image pulls
// are retried by the kubelet, but once it backs off the image is most
// likely missing (an image built locally and not loaded into the cluster).
func stuck(p *corev1.Pod) error {
	for _, s := range p.Status.ContainerStatuses {
		w := s.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
			return fmt.Errorf("pod %s cannot start its container %s: %s: %s", p.Name, s.Name, w.Reason, w.Message)
		}
	}
	return nil
}

// unscheduled returns why a pod has not been scheduled, or "".
func unscheduled(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// readLog reads the pod's log to its end (following it while the pod
// runs, with follow) through tail, which copies it to progress, and returns
// the result in it.
func (a *applier) readLog(ctx context.Context, namespace, pod string, follow bool, tail *echo) (*results.Result, error) {
	rc, err := a.cluster.Log(ctx, namespace, pod, follow)
	if err != nil {
		return nil, fmt.Errorf("read the log of pod %s: %w", pod, err)
	}
	defer rc.Close()
	res, err := results.ReadLog(io.TeeReader(rc, tail))
	tail.flush()
	return res, err
}

// finished waits until the coordinator's Job has completed or failed, and
// returns it. While the coordinator holds its result (Options.Hold), it
// fetches it, if the log did not say when: a coordinator that holds its
// result ends only once it is released. haveLog says the log gave a
// result already: when the held one cannot be fetched (no right to the
// pods' proxy, an API server that does not reach the pods), the log's
// copy is taken without waiting for the hold's end.
func (a *applier) finished(ctx context.Context, o *Options, pod string, haveLog bool) (*batchv1.Job, error) {
	for {
		job, err := a.cluster.Job(ctx, o.Namespace, o.coordinatorName())
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return job, nil
			}
		}
		if a.unreleased {
			return job, nil // the result is here; the coordinator would hold it
		}
		if o.hold() > 0 && a.fetched == nil && !a.followed {
			a.fetch(ctx, o, pod, 1, false) // without the log, nothing says when: ask
		}
		if o.hold() > 0 && a.fetched == nil && haveLog && a.fetchErr != nil {
			return job, nil
		}
		if err := a.wait(ctx); err != nil {
			return nil, err
		}
	}
}

// failed returns the Job's Failed condition when it holds, or nil.
func failed(job *batchv1.Job) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// wait waits one poll interval, or until ctx is done.
func (a *applier) wait(ctx context.Context) error {
	t := time.NewTimer(a.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("apply: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// echo copies a log to w line by line, leaving out the result between
// results.LogBegin and results.LogEnd, and keeps its last lines for an
// error message.
type echo struct {
	w       io.Writer
	held    func()   // if set, called when the log says the result is held (or whole in it)
	partial []byte   // a line not ended yet
	inside  bool     // within a result
	lines   []string // the last tailLines lines, outside a result
}

// tailLines is how many of the log's last lines an error quotes.
const tailLines = 20

func (e *echo) Write(p []byte) (int, error) {
	e.partial = append(e.partial, p...)
	for {
		i := bytes.IndexByte(e.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		e.line(string(e.partial[:i+1]))
		e.partial = e.partial[i+1:]
	}
}

// flush passes on the last line when the log did not end it.
func (e *echo) flush() {
	if len(e.partial) > 0 {
		e.line(string(e.partial) + "\n")
		e.partial = nil
	}
}

func (e *echo) line(l string) {
	trimmed := strings.TrimSpace(l)
	switch {
	case trimmed == results.LogBegin:
		e.inside = true
		return
	case trimmed == results.LogEnd:
		e.inside = false
		return
	case strings.HasPrefix(trimmed, results.LogSum):
		// The result is whole in the log: the coordinator holds it now.
		if e.held != nil {
			e.held()
		}
		return
	case strings.HasPrefix(trimmed, results.HeldLine):
		// Its own line, even where the log's merge of stdout and stderr
		// put it within the result.
		if e.held != nil {
			e.held()
		}
	}
	if e.inside {
		return
	}
	e.w.Write([]byte(l)) // progress only: a failed write loses a line, not the run
	if e.lines = append(e.lines, strings.TrimRight(l, "\r\n")); len(e.lines) > tailLines {
		e.lines = e.lines[1:]
	}
}

// last returns the last lines, indented.
func (e *echo) last() string {
	if len(e.lines) == 0 {
		return "  (empty)"
	}
	return "  " + strings.Join(e.lines, "\n  ")
}
