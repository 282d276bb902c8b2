package k8s

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// Objects are the Kubernetes objects of a run by agents, in the order
// they are created.
type Objects struct {
	// Plan is a Secret holding the plan as plan.yaml, and the
	// coordinator's flags (after "--") that hold a secret, as arg-N (the
	// Nth of Options.Args): a plan holds credentials (headers, login
	// bodies, URLs), which belong in a Secret. Only the coordinator's pod
	// mounts it; the agents get the plan from the coordinator.
	Plan *corev1.Secret
	// Token is a Secret holding the agents' token under the key "token".
	Token *corev1.Secret
	// Service is the agents' headless Service: it gives each agent's pod
	// a DNS name, and balances nothing.
	Service *corev1.Service
	// Policy, when Options.NetworkPolicy asks for it, lets only the
	// coordinator's pod reach the agents' pods, on the agents' port; nil
	// otherwise.
	Policy *networkingv1.NetworkPolicy
	// Agents is an Indexed Job of Options.Agents pods, each running
	// `ceiling agent --once`: an agent exits 0 once the coordinator's
	// session with it has closed, so the Job completes when the run is
	// over.
	Agents *batchv1.Job
	// Coordinator is a Job of one pod running `ceiling run` (or find) with
	// the agents, which prints result.json into its log, keeps it for a
	// client to fetch (Options.Hold) and ends.
	Coordinator *batchv1.Job
}

// List returns the objects in the order they are created: the policy, if
// any, before the agents, so that they are never open to others.
func (m *Objects) List() []runtime.Object {
	objs := []runtime.Object{m.Plan, m.Token, m.Service}
	if m.Policy != nil {
		objs = append(objs, m.Policy)
	}
	return append(objs, m.Agents, m.Coordinator)
}

// The labels every object has; the agents' and the coordinator's pods add
// app.kubernetes.io/component.
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	labelManagedBy = "app.kubernetes.io/managed-by"
	// annotationPlan names the plan file the plan's Secret holds.
	annotationPlan = "ceiling.dev/plan-file"
	// nonRoot is the user and group of distroless' nonroot images, given
	// as a number so that the kubelet can check runAsNonRoot.
	nonRoot = 65532
)

// Manifests builds the objects that run o's plan: the plan and the token,
// the agents behind their headless Service, and the coordinator. It
// validates o first, returning every problem at once.
func Manifests(o Options) (*Objects, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	planData := map[string][]byte{path.Base(PlanPath): o.Plan}
	for _, i := range o.secretArgs() {
		planData[argKey(i)] = []byte(o.Args[i])
	}
	m := &Objects{
		Plan: &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: o.meta(o.planName(), ""),
			Type:       corev1.SecretTypeOpaque,
			Data:       planData,
		},
		Token: &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: o.meta(o.tokenName(), ""),
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{path.Base(TokenPath): []byte(o.Token)},
		},
		Service:     o.service(),
		Agents:      o.agents(),
		Coordinator: o.coordinator(),
	}
	if o.NetworkPolicy {
		m.Policy = o.policy()
	}
	return m, nil
}

// labels returns the labels of o's objects; component, when not empty,
// says which pods.
func (o *Options) labels(component string) map[string]string {
	l := map[string]string{labelName: "ceiling", labelInstance: o.Name, labelManagedBy: "ceiling"}
	if component != "" {
		l[labelComponent] = component
	}
	return l
}

func (o *Options) meta(name, component string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels(component)}
	if name == o.planName() && o.PlanName != "" {
		m.Annotations = map[string]string{annotationPlan: o.PlanName}
	}
	return m
}

// agentSelector selects the agents' pods.
func (o *Options) agentSelector() map[string]string {
	return map[string]string{labelInstance: o.Name, labelComponent: "agent"}
}

// service is headless (no cluster IP): DNS answers each agent's own
// address. It publishes pods before they are ready so that their names
// resolve as soon as they have an address: the coordinator waits for
// every agent's health itself (Options.AgentsTimeout).
func (o *Options) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: o.meta(o.agentsName(), "agent"),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 o.agentSelector(),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "agent", Port: Port, TargetPort: intstr.FromString("agent"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// policy selects the agents' pods and admits, on the agents' port, only
// the coordinator's pod of the run (in the same namespace). With a
// network plugin that enforces policies, nothing else reaches the agents;
// the kubelet's probes, from the node, are allowed whatever the policy.
func (o *Options) policy() *networkingv1.NetworkPolicy {
	port := intstr.FromInt32(Port)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: o.meta(o.agentsName(), "agent"),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: o.agentSelector()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{labelInstance: o.Name, labelComponent: "coordinator"},
				}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: new(corev1.ProtocolTCP), Port: &port}},
			}},
		},
	}
}

// bounds sets a Job's deadline (activeDeadlineSeconds: the cluster stops
// its pods past it) and how long it is kept once finished
// (ttlSecondsAfterFinished: then the cluster deletes it, its pods and
// their logs).
func (o *Options) bounds(spec *batchv1.JobSpec) {
	spec.ActiveDeadlineSeconds = new(int64(o.deadline().Seconds()))
	spec.TTLSecondsAfterFinished = new(int32(min(o.ttl().Seconds(), math.MaxInt32)))
}

// agents is an Indexed Job: its pod of index i has the hostname
// NAME-agents-i, in the Service's subdomain. Each agent serves one run
// (--once) and exits 0 when the coordinator's session with it closes (the
// coordinator ended it, or it went idle), so the Job completes with the
// run; an agent whose coordinator never opened a session stops with an
// error after --idle-timeout (agentsIdle), rather than at the deadline. A failed agent fails the Job (no retries: the run it was in cannot
// continue without it).
func (o *Options) agents() *batchv1.Job {
	n := int32(o.Agents)
	pod := o.pod("agent", []string{"agent", "--listen", fmt.Sprintf(":%d", Port), "--token-file", TokenPath, "--once",
		"--idle-timeout", o.agentsIdle().String()}, false)
	pod.Spec.Subdomain = o.agentsName()
	pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		// Preferred, not required: more agents than nodes still run.
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: o.agentSelector()},
				TopologyKey:   corev1.LabelHostname,
			},
		}},
	}}
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "agent", ContainerPort: Port, Protocol: corev1.ProtocolTCP}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/v1/health", Port: intstr.FromString("agent")}},
		PeriodSeconds: 2, FailureThreshold: 3,
	}
	c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory} {
		if q != "" {
			c.Resources.Requests[name] = resource.MustParse(q) // validate parsed it
			c.Resources.Limits[name] = resource.MustParse(q)
		}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.agentsName(), "agent"),
		Spec: batchv1.JobSpec{
			CompletionMode: new(batchv1.IndexedCompletion),
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   new(int32(0)),
			Template:       pod,
		},
	}
	o.bounds(&job.Spec)
	return job
}

// coordinator is a Job of one pod, never retried: a second attempt would
// start the plan over. It prints the result into its log and, unless
// Options.Hold says not to, keeps it served on results.HeldPort after the
// run until it is fetched (--hold-result). Its flags that hold a secret come from its
// environment, filled from the plan's Secret: the Job's spec holds
// $(CEILING_ARG_N), which the kubelet replaces.
func (o *Options) coordinator() *batchv1.Job {
	pod := o.pod("coordinator", o.command(), true)
	for _, i := range o.secretArgs() {
		pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{
			Name: argEnv(i),
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: o.planName()}, Key: argKey(i),
			}},
		})
	}
	if o.hold() > 0 {
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "result", ContainerPort: results.HeldPort, Protocol: corev1.ProtocolTCP}}
	}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		// A result of tens of MB (a long search, many metric series) is
		// held several times over while it is judged, printed and kept:
		// at 512Mi such a coordinator was killed before it wrote it.
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.coordinatorName(), "coordinator"),
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template:     pod,
		},
	}
	o.bounds(&job.Spec)
	return job
}

// pod is the pod template both Jobs share: one container of the image
// with args, the token (and, with withPlan, the plan) mounted read-only,
// an emptyDir on /tmp, a read-only root file system, a non-root user, no
// privilege, no service account token (ceiling does not talk to the API
// from inside), no service links.
func (o *Options) pod(component string, args []string, withPlan bool) corev1.PodTemplateSpec {
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: o.labels(component)},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(false),
			EnableServiceLinks:           new(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   new(true),
				RunAsUser:      new(int64(nonRoot)),
				RunAsGroup:     new(int64(nonRoot)),
				FSGroup:        new(int64(nonRoot)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            component,
				Image:           o.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            args,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "token", MountPath: path.Dir(TokenPath), ReadOnly: true},
					{Name: "tmp", MountPath: "/tmp"},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: new(false),
					ReadOnlyRootFilesystem:   new(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: o.tokenName(), DefaultMode: new(int32(0o440)), // read by the group, fsGroup
				}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
	}
	if withPlan {
		spec := &pod.Spec
		spec.Containers[0].VolumeMounts = append([]corev1.VolumeMount{{Name: "plan", MountPath: path.Dir(PlanPath), ReadOnly: true}}, spec.Containers[0].VolumeMounts...)
		spec.Volumes = append([]corev1.Volume{{Name: "plan", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: o.planName(), DefaultMode: new(int32(0o440)), // read by the group, fsGroup
			// The plan only: the flags are the environment's.
			Items: []corev1.KeyToPath{{Key: path.Base(PlanPath), Path: path.Base(PlanPath)}},
		}}}}, spec.Volumes...)
	}
	return pod
}

// argKey is the plan Secret's key of the coordinator's flag o.Args[i],
// and argEnv the variable it is given to the coordinator in.
func argKey(i int) string { return "arg-" + strconv.Itoa(i) }
func argEnv(i int) string { return "CEILING_ARG_" + strconv.Itoa(i) }

// Write writes objs as one YAML document each, separated by "---", as
// kubectl apply -f reads them. Each object must have its apiVersion and
// kind set (Manifests sets them). Their status is left out.
func Write(w io.Writer, objs ...runtime.Object) error {
	for i, obj := range objs {
		kind := obj.GetObjectKind().GroupVersionKind()
		if kind.Kind == "" || kind.Version == "" {
			return fmt.Errorf("write manifests: object %d (%T) has no apiVersion and kind", i, obj)
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
		delete(doc, "status") // the cluster's to fill
		out, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
		if i > 0 {
			out = append([]byte("---\n"), out...)
		}
		if _, err := w.Write(out); err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
	}
	return nil
}
