package k8s

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is what Apply asks of a Kubernetes API server. Errors from the
// server are client-go's API errors (k8s.io/apimachinery/pkg/api/errors),
// so that apierrors.IsAlreadyExists and IsNotFound tell them apart.
//
// The binary's implementation is restCluster, a REST client of the core/v1,
// batch/v1 and networking.k8s.io/v1 APIs only; the tests' is an adapter over client-go's fake
// clientset (fake_test.go), which links the whole typed clientset into the
// test binary and not into ceiling.
type Cluster interface {
	// Create creates obj, a *corev1.Secret, *corev1.Service,
	// *networkingv1.NetworkPolicy or *batchv1.Job, in namespace.
	Create(ctx context.Context, namespace string, obj runtime.Object) error
	// Delete deletes the object of resource ("secrets", "services",
	// "networkpolicies" or "jobs") named name, with background
	// propagation: a Job's pods are deleted after it by the cluster.
	Delete(ctx context.Context, resource, namespace, name string) error
	// Job returns the Job named name, with its status.
	Job(ctx context.Context, namespace, name string) (*batchv1.Job, error)
	// Pods lists the pods that match selector, a label selector
	// ("app.kubernetes.io/instance=ceiling").
	Pods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	// Log opens a pod's log (the pods/log subresource); with follow it
	// stays open while the pod's container runs.
	Log(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error)
	// Proxy sends a request of method to path on a pod's port through the
	// API server (the pods/proxy subresource), with header, and opens the
	// answer's body; an answer other than 2xx is an error.
	Proxy(ctx context.Context, namespace, pod string, port int, method, path string, header http.Header) (io.ReadCloser, error)
}

// kindOf returns the API's resource name of an object Cluster.Create
// takes, and the kind kubectl names it by, or "" for any other object.
func kindOf(obj runtime.Object) (resource, kind string) {
	switch obj.(type) {
	case *corev1.Secret:
		return "secrets", "secret"
	case *corev1.Service:
		return "services", "service"
	case *networkingv1.NetworkPolicy:
		return "networkpolicies", "networkpolicy"
	case *batchv1.Job:
		return "jobs", "job"
	}
	return "", ""
}

// restCluster is a Cluster over three REST clients, one for core/v1
// (Secrets, Services, pods and their logs), one for batch/v1
// (Jobs) and one for networking.k8s.io/v1 (the NetworkPolicy), which share
// one HTTP client. Their scheme registers only those groups (and the meta
// types they share), rather than client-go's kubernetes.Clientset, whose
// scheme registers every group of the API and links them all into the
// binary.
type restCluster struct {
	core, batch, networking *rest.RESTClient
}

var _ Cluster = (*restCluster)(nil)

// connect loads the kubeconfig as kubectl does (path; else $KUBECONFIG;
// else ~/.kube/config; else the cluster a pod runs in) and returns a
// Cluster of its current context, and that context's namespace.
func connect(path string) (*restCluster, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := config.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("k8s: load the kubeconfig: %w", err)
	}
	namespace, _, err := config.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("k8s: load the kubeconfig: %w", err)
	}
	c, err := newREST(rc)
	if err != nil {
		return nil, "", fmt.Errorf("k8s: %w", err)
	}
	return c, namespace, nil
}

// newREST returns a restCluster of the server config names.
func newREST(config *rest.Config) (*restCluster, error) {
	scheme := runtime.NewScheme()
	// Each group's AddToScheme also registers metav1's Status (the
	// server's errors), DeleteOptions and the list options in it.
	if err := errors.Join(corev1.AddToScheme(scheme), batchv1.AddToScheme(scheme), networkingv1.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	group := func(apiPath string, gv schema.GroupVersion) (*rest.RESTClient, error) {
		c := rest.CopyConfig(config)
		c.APIPath, c.GroupVersion, c.NegotiatedSerializer = apiPath, &gv, codecs
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientForConfigAndClient(c, client)
	}
	core, err1 := group("/api", corev1.SchemeGroupVersion)
	batch, err2 := group("/apis", batchv1.SchemeGroupVersion)
	networking, err3 := group("/apis", networkingv1.SchemeGroupVersion)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return &restCluster{core: core, batch: batch, networking: networking}, nil
}

// client returns the REST client of resource's group.
func (c *restCluster) client(resource string) *rest.RESTClient {
	switch resource {
	case "jobs":
		return c.batch
	case "networkpolicies":
		return c.networking
	}
	return c.core
}

func (c *restCluster) Create(ctx context.Context, namespace string, obj runtime.Object) error {
	r, _ := kindOf(obj)
	if r == "" {
		return fmt.Errorf("create %T: not an object ceiling k8s creates", obj)
	}
	return c.client(r).Post().Namespace(namespace).Resource(r).Body(obj).Do(ctx).Error()
}

func (c *restCluster) Delete(ctx context.Context, resource, namespace, name string) error {
	background := metav1.DeletePropagationBackground
	return c.client(resource).Delete().Namespace(namespace).Resource(resource).Name(name).
		Body(&metav1.DeleteOptions{PropagationPolicy: &background}).Do(ctx).Error()
}

func (c *restCluster) Job(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	return job, c.batch.Get().Namespace(namespace).Resource("jobs").Name(name).Do(ctx).Into(job)
}

func (c *restCluster) Pods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := c.core.Get().Namespace(namespace).Resource("pods").Param("labelSelector", selector).Do(ctx).Into(&pods)
	return pods.Items, err
}

func (c *restCluster) Proxy(ctx context.Context, namespace, pod string, port int, method, path string, header http.Header) (io.ReadCloser, error) {
	r := c.core.Verb(method).Namespace(namespace).Resource("pods").Name(pod + ":" + strconv.Itoa(port)).SubResource("proxy").Suffix(path)
	for name, values := range header {
		r = r.SetHeader(name, values...)
	}
	return r.Stream(ctx)
}

func (c *restCluster) Log(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error) {
	r := c.core.Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log")
	if follow {
		r = r.Param("follow", "true")
	}
	return r.Stream(ctx)
}
