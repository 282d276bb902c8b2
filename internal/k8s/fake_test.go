package k8s

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// fakeCluster is the tests' Cluster: an adapter over client-go's fake
// clientset (k8s.io/client-go/kubernetes/fake), an object store with no
// scheduler, no Job controller, no kubelet and no DNS. It lives in a test
// file so that the typed clientset, with every group of the API, is linked
// into the test binary only; ceiling itself talks to a cluster through
// restCluster (rest_test.go checks what that sends).
type fakeCluster struct {
	client kubernetes.Interface
	// logs, if set, answers Log; otherwise the clientset's pods/log does,
	// which answers "fake logs" unless a reactor gives the body.
	logs func(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error)
	// proxy, if set, answers Proxy as the pod would (the path is the
	// request's); otherwise Proxy fails as an API server does when
	// nothing listens on the pod's port.
	proxy http.Handler
}

var _ Cluster = fakeCluster{}

func (f fakeCluster) Create(ctx context.Context, namespace string, obj runtime.Object) error {
	var err error
	create := metav1.CreateOptions{}
	switch o := obj.(type) {
	case *corev1.Secret:
		_, err = f.client.CoreV1().Secrets(namespace).Create(ctx, o, create)
	case *corev1.Service:
		_, err = f.client.CoreV1().Services(namespace).Create(ctx, o, create)
	case *networkingv1.NetworkPolicy:
		_, err = f.client.NetworkingV1().NetworkPolicies(namespace).Create(ctx, o, create)
	case *batchv1.Job:
		_, err = f.client.BatchV1().Jobs(namespace).Create(ctx, o, create)
	default:
		err = fmt.Errorf("create %T: not an object ceiling k8s creates", obj)
	}
	return err
}

func (f fakeCluster) Delete(ctx context.Context, resource, namespace, name string) error {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	switch resource {
	case "secrets":
		return f.client.CoreV1().Secrets(namespace).Delete(ctx, name, opts)
	case "services":
		return f.client.CoreV1().Services(namespace).Delete(ctx, name, opts)
	case "networkpolicies":
		return f.client.NetworkingV1().NetworkPolicies(namespace).Delete(ctx, name, opts)
	case "jobs":
		return f.client.BatchV1().Jobs(namespace).Delete(ctx, name, opts)
	}
	return fmt.Errorf("delete %s/%s: not a resource ceiling k8s creates", resource, name)
}

func (f fakeCluster) Job(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
	return f.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (f fakeCluster) Pods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	pods, err := f.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

func (f fakeCluster) Proxy(_ context.Context, namespace, pod string, port int, method, path string, header http.Header) (io.ReadCloser, error) {
	if f.proxy == nil {
		return nil, fmt.Errorf("the server is currently unable to handle the request (%s pods %s:%d)", strings.ToLower(method), pod, port)
	}
	req := httptest.NewRequest(method, path, nil)
	req.Header = header.Clone()
	w := httptest.NewRecorder()
	f.proxy.ServeHTTP(w, req)
	if w.Code/100 != 2 {
		return nil, fmt.Errorf("pods %s:%d: %d %s", pod, port, w.Code, strings.TrimSpace(w.Body.String()))
	}
	return io.NopCloser(w.Body), nil
}

func (f fakeCluster) Log(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error) {
	if f.logs != nil {
		return f.logs(ctx, namespace, pod, follow)
	}
	return f.client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Follow: follow}).Stream(ctx)
}
