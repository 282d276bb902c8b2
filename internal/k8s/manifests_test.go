package k8s

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

const testPlan = "name: checkout\ntarget: http://shop.shop.svc:8080\nload:\n  rates: [50, 100]\n  step: 30s\nscenarios:\n  - request: {url: /}\n"

// options are those of `ceiling k8s plan.yaml --agents 3 --find
// --network-policy --deadline 1h --ttl 2h -- --start 50`.
func options() Options {
	return Options{
		Name: "checkout", Namespace: "loadtest", Image: "registry.example/ceiling:v1.2.3",
		Agents: 3, CPU: "2", Memory: "1Gi", Find: true, Args: []string{"--start", "50"},
		Plan: []byte(testPlan), PlanName: "checkout.yaml", Token: "0123456789abcdef",
		Deadline: time.Hour, TTL: 2 * time.Hour, NetworkPolicy: true,
	}
}

// bare are the fewest options: one agent, no namespace, no network
// policy, the default deadline and TTL.
func bare() Options {
	return Options{Name: "ceiling", Image: "ceiling:dev", Agents: 1, Plan: []byte(testPlan), Token: "t"}
}

func TestManifestsGolden(t *testing.T) {
	for name, o := range map[string]Options{"find-3-agents": options(), "run-1-agent-no-namespace": bare()} {
		t.Run(name, func(t *testing.T) {
			got := manifestsYAML(t, o)
			decode(t, got) // every field known to the API's types
			golden := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/k8s -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Write(Manifests()) differs from %s (-want +got; -update rewrites it):\n%s", golden, diff)
			}
		})
	}
}

func manifestsYAML(t *testing.T, o Options) []byte {
	t.Helper()
	m, err := Manifests(o)
	if err != nil {
		t.Fatalf("Manifests = %v", err)
	}
	var b bytes.Buffer
	if err := Write(&b, m.List()...); err != nil {
		t.Fatalf("Write = %v", err)
	}
	return b.Bytes()
}

// decoded are the printed documents decoded back; policy is nil when
// none was printed.
type decoded struct {
	plan        corev1.Secret
	token       corev1.Secret
	service     corev1.Service
	policy      *networkingv1.NetworkPolicy
	agents      batchv1.Job
	coordinator batchv1.Job
}

// strictDecoder decodes a YAML document into the API type its apiVersion
// and kind name, as the API server does with fieldValidation=Strict: a
// field the type does not know at that place (a misspelt or misplaced
// one), a duplicate field, or a kind of no registered group is an error.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(scheme), batchv1.AddToScheme(scheme), networkingv1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
}

// decode decodes every document Write printed with strictDecoder, in
// the order they are created.
func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	dec := strictDecoder(t)
	var d decoded
	var kinds []string
	for i, doc := range strings.Split(string(data), "\n---\n") {
		obj, gvk, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i, err, doc)
		}
		kinds = append(kinds, gvk.Kind)
		switch o := obj.(type) {
		case *corev1.Secret:
			if strings.HasSuffix(o.Name, "-plan") {
				d.plan = *o
			} else {
				d.token = *o
			}
		case *corev1.Service:
			d.service = *o
		case *networkingv1.NetworkPolicy:
			d.policy = o
		case *batchv1.Job:
			if o.Labels[labelComponent] == "agent" {
				d.agents = *o
			} else {
				d.coordinator = *o
			}
		}
	}
	want := []string{"Secret", "Secret", "Service", "Job", "Job"}
	if d.policy != nil {
		want = slices.Insert(want, 3, "NetworkPolicy")
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("Write printed %q, want %q", kinds, want)
	}
	return d
}

// The strict decoding that the tests rely on refuses what kubectl's
// server-side validation would: a field where the type has none (a Job's
// field put in its pod's spec), an unknown field, a duplicate one.
func TestStrictDecodingRefuses(t *testing.T) {
	docs := strings.Split(string(manifestsYAML(t, options())), "\n---\n")
	job := docs[len(docs)-1] // the coordinator's Job
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(job), &doc); err != nil {
		t.Fatal(err)
	}
	spec := doc["spec"].(map[string]any)
	podSpec := spec["template"].(map[string]any)["spec"].(map[string]any)
	podSpec["ttlSecondsAfterFinished"] = spec["ttlSecondsAfterFinished"] // misplaced: a Job's field, in the pod's spec
	misplaced, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ doc, want string }{
		"a Job's field in its pod's spec": {string(misplaced), `unknown field "spec.template.spec.ttlSecondsAfterFinished"`},
		"a misspelt field":                {strings.Replace(job, "activeDeadlineSeconds:", "activeDeadline:", 1), `unknown field "spec.activeDeadline"`},
		"a field twice":                   {strings.Replace(job, "  backoffLimit: 0\n", "  backoffLimit: 0\n  backoffLimit: 1\n", 1), "backoffLimit"},
		"a kind of no group we use":       {strings.Replace(job, "kind: Job", "kind: CronJobs", 1), "no kind"},
	}
	dec := strictDecoder(t)
	for name, tt := range tests {
		if _, _, err := dec.Decode([]byte(tt.doc), nil, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Decode = %v, want an error naming %s", name, err, tt.want)
		}
	}
}

func TestManifestsDecodeToWhatTheyMean(t *testing.T) {
	o := options()
	d := decode(t, manifestsYAML(t, o))
	for _, c := range []struct {
		name  string
		check func(*testing.T, decoded, Options)
	}{
		{"objects", checkObjects},
		{"service", checkService},
		{"agents' job", checkAgentsJob},
		{"coordinator", checkCoordinator},
		{"deadlines", checkDeadlines},
		{"network policy", checkPolicy},
		{"agents", checkAgents},
		{"agents' pod", func(t *testing.T, d decoded, o Options) {
			checkPod(t, d.agents.Spec.Template, "", d.token.Name, o.Image)
		}},
		{"coordinator's pod", func(t *testing.T, d decoded, o Options) {
			checkPod(t, d.coordinator.Spec.Template, d.plan.Name, d.token.Name, o.Image)
		}},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, d, o) })
	}
}

// checkObjects checks every object's kind, version and namespace, and
// what the two Secrets hold.
func checkObjects(t *testing.T, d decoded, o Options) {
	kinds := []string{d.plan.Kind, d.token.Kind, d.service.Kind, d.policy.Kind, d.agents.Kind, d.coordinator.Kind}
	versions := []string{d.plan.APIVersion, d.token.APIVersion, d.service.APIVersion, d.policy.APIVersion, d.agents.APIVersion, d.coordinator.APIVersion}
	if !slices.Equal(kinds, []string{"Secret", "Secret", "Service", "NetworkPolicy", "Job", "Job"}) ||
		!slices.Equal(versions, []string{"v1", "v1", "v1", "networking.k8s.io/v1", "batch/v1", "batch/v1"}) {
		t.Errorf("kinds = %v %v, want Secret, Secret, Service, NetworkPolicy, Job, Job in v1, networking.k8s.io/v1 and batch/v1", kinds, versions)
	}
	for _, ns := range []string{d.plan.Namespace, d.token.Namespace, d.service.Namespace, d.policy.Namespace, d.agents.Namespace, d.coordinator.Namespace} {
		if ns != o.Namespace {
			t.Errorf("namespace = %q, want %q on every object", ns, o.Namespace)
		}
	}
	if d.plan.Type != corev1.SecretTypeOpaque || string(d.plan.Data[path.Base(PlanPath)]) != testPlan || d.plan.Annotations[annotationPlan] != "checkout.yaml" {
		t.Errorf("the plan's Secret = %s %q %v, want Opaque with the plan under %s and its file name", d.plan.Type, d.plan.Data, d.plan.Annotations, path.Base(PlanPath))
	}
	if d.token.Type != corev1.SecretTypeOpaque || string(d.token.Data["token"]) != o.Token {
		t.Errorf("Secret = %s %q, want Opaque with the token under \"token\"", d.token.Type, d.token.Data)
	}
}

// checkService checks that the Service is headless and selects the
// agents, and only them.
func checkService(t *testing.T, d decoded, _ Options) {
	svc, agentPod, coordPod := d.service, d.agents.Spec.Template, d.coordinator.Spec.Template
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !sel.Matches(labels.Set(agentPod.Labels)) || sel.Matches(labels.Set(coordPod.Labels)) {
		t.Errorf("Service = clusterIP %q, selector %v, want None selecting the agents' pods %v, not the coordinator's %v",
			svc.Spec.ClusterIP, svc.Spec.Selector, agentPod.Labels, coordPod.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != Port {
		t.Errorf("Service ports = %+v, want %d", svc.Spec.Ports, Port)
	}
}

// checkAgentsJob checks that the agents are an Indexed Job of N pods at
// once, in the Service's subdomain.
func checkAgentsJob(t *testing.T, d decoded, _ Options) {
	spec, agentPod, svc := d.agents.Spec, d.agents.Spec.Template, d.service
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion ||
		*spec.Parallelism != 3 || *spec.Completions != 3 || agentPod.Spec.Subdomain != svc.Name {
		t.Errorf("agents' Job = mode %v, parallelism %d, completions %d, subdomain %q; want Indexed, 3, 3, %q",
			spec.CompletionMode, *spec.Parallelism, *spec.Completions, agentPod.Spec.Subdomain, svc.Name)
	}
}

// checkCoordinator checks the coordinator's arguments, port and restarts.
func checkCoordinator(t *testing.T, d decoded, o Options) {
	agentPod, coordPod := d.agents.Spec.Template, d.coordinator.Spec.Template
	// The coordinator dials each agent by the name Kubernetes gives its
	// pod: hostname JOB-INDEX, in subdomain SERVICE of the namespace.
	var want []string
	for i := range 3 {
		want = append(want, fmt.Sprintf("%s-%d.%s.%s.svc:%d", d.agents.Name, i, agentPod.Spec.Subdomain, o.Namespace, Port))
	}
	args := coordPod.Spec.Containers[0].Args
	if got := flagValue(args, "--agents"); got != strings.Join(want, ",") {
		t.Errorf("coordinator --agents = %q, want %q", got, strings.Join(want, ","))
	}
	if args[0] != "find" || args[1] != PlanPath || !slices.Contains(args, "--emit-result") ||
		flagValue(args, "--token-file") != TokenPath || flagValue(args, "--agents-timeout") != "5m0s" || flagValue(args, "--start") != "50" {
		t.Errorf("coordinator args = %q, want find %s with the token, --emit-result, the default timeout and --start 50", args, PlanPath)
	}
	if b := d.coordinator.Spec.BackoffLimit; b == nil || *b != 0 || coordPod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("coordinator backoffLimit = %v, restart %s, want 0 and Never", b, coordPod.Spec.RestartPolicy)
	}
	// The coordinator holds its result after the run on its result port,
	// for Apply (or kubectl port-forward) to fetch.
	coord := coordPod.Spec.Containers[0]
	if flagValue(args, "--hold-result") != "15m0s" || len(coord.Ports) != 1 || coord.Ports[0].ContainerPort != 7071 || coord.Ports[0].Name != "result" {
		t.Errorf("coordinator args = %q, ports %+v; want --hold-result 15m0s and the port 7071 named result", args, coord.Ports)
	}
}

// checkDeadlines checks that both Jobs end by the deadline, finished or
// not, and are deleted a TTL after they finish.
func checkDeadlines(t *testing.T, d decoded, _ Options) {
	for _, job := range []batchv1.Job{d.agents, d.coordinator} {
		if a, ttl := job.Spec.ActiveDeadlineSeconds, job.Spec.TTLSecondsAfterFinished; a == nil || *a != 3600 || ttl == nil || *ttl != 7200 {
			t.Errorf("job/%s: activeDeadlineSeconds %v, ttlSecondsAfterFinished %v; want 3600 and 7200", job.Name, a, ttl)
		}
	}
}

// checkPolicy checks that the policy admits the coordinator's pod, and
// only it, to the agents' pods, on the agents' port.
func checkPolicy(t *testing.T, d decoded, _ Options) {
	pol, agentPod, coordPod := d.policy.Spec, d.agents.Spec.Template, d.coordinator.Spec.Template
	applies := labels.SelectorFromSet(pol.PodSelector.MatchLabels)
	if !applies.Matches(labels.Set(agentPod.Labels)) || applies.Matches(labels.Set(coordPod.Labels)) ||
		!slices.Equal(pol.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(pol.Ingress) != 1 {
		t.Fatalf("NetworkPolicy = %+v, want an ingress policy of the agents' pods %v, not the coordinator's", pol, agentPod.Labels)
	}
	rule := pol.Ingress[0]
	if len(rule.From) != 1 || rule.From[0].PodSelector == nil || rule.From[0].NamespaceSelector != nil || rule.From[0].IPBlock != nil {
		t.Fatalf("NetworkPolicy from = %+v, want one pod selector of this namespace", rule.From)
	}
	from := labels.SelectorFromSet(rule.From[0].PodSelector.MatchLabels)
	if !from.Matches(labels.Set(coordPod.Labels)) || from.Matches(labels.Set(agentPod.Labels)) {
		t.Errorf("NetworkPolicy admits pods %v, want the coordinator's %v and not the agents' %v", rule.From[0].PodSelector.MatchLabels, coordPod.Labels, agentPod.Labels)
	}
	other := map[string]string{labelName: "ceiling", labelInstance: "another-run", labelComponent: "coordinator"}
	if from.Matches(labels.Set(other)) {
		t.Errorf("NetworkPolicy admits another run's coordinator %v", other)
	}
	if len(rule.Ports) != 1 || rule.Ports[0].Port.IntVal != Port || *rule.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("NetworkPolicy ports = %+v, want TCP %d", rule.Ports, Port)
	}
}

// checkAgents checks that agents spread over nodes, get what they ask
// for, and are probed.
func checkAgents(t *testing.T, d decoded, _ Options) {
	agentPod := d.agents.Spec.Template
	aa := agentPod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
		!labels.SelectorFromSet(aa[0].PodAffinityTerm.LabelSelector.MatchLabels).Matches(labels.Set(agentPod.Labels)) {
		t.Errorf("agents' anti-affinity = %+v, want preferred on kubernetes.io/hostname against the agents' pods", aa)
	}
	agent := agentPod.Spec.Containers[0]
	res := agent.Resources
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "1Gi"} {
		want := resource.MustParse(q)
		if r, l := res.Requests[name], res.Limits[name]; r.Cmp(want) != 0 || l.Cmp(want) != 0 {
			t.Errorf("agent %s = request %s, limit %s, want both %s", name, r.String(), l.String(), q)
		}
	}
	// An agent whose coordinator never comes stops after the coordinator's
	// own wait (5m) and a margin for its pod to start, not at the deadline.
	if !slices.Equal(agent.Args, []string{"agent", "--listen", ":7070", "--token-file", TokenPath, "--once", "--idle-timeout", "10m0s"}) {
		t.Errorf("agent args = %q", agent.Args)
	}
	p := agent.ReadinessProbe
	if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/v1/health" || p.HTTPGet.Port.StrVal != agent.Ports[0].Name || agent.Ports[0].ContainerPort != Port {
		t.Errorf("agent readiness = %+v, ports %+v, want GET /v1/health on the agent's port", p, agent.Ports)
	}
}

// checkPod checks what both pods share: the token (and the plan, when
// planName is not empty; the agents have none) mounted read-only where
// the commands read them, and a locked-down container.
func checkPod(t *testing.T, pod corev1.PodTemplateSpec, planName, tokenName, image string) {
	t.Helper()
	s := pod.Spec
	c := s.Containers[0]
	name := c.Name
	if len(s.Containers) != 1 || c.Image != image {
		t.Errorf("%s: containers %d, image %q, want 1 of %q", name, len(s.Containers), c.Image, image)
	}
	checkMounts(t, name, s, planName, tokenName)
	sc, pc := c.SecurityContext, s.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || pc == nil || !*pc.RunAsNonRoot || *pc.RunAsUser == 0 {
		t.Errorf("%s: security = %+v %+v, want non-root, a read-only root, no privilege escalation", name, sc, pc)
	}
	if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken = %v, want false", name, s.AutomountServiceAccountToken)
	}
}

// checkMounts checks the volumes of the pod's container name: the token
// (and the plan, when planName is not empty) read-only, and an emptyDir
// on /tmp.
func checkMounts(t *testing.T, name string, s corev1.PodSpec, planName, tokenName string) {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range s.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range s.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	plan, token := mounts[path.Dir(PlanPath)], mounts[path.Dir(TokenPath)]
	switch pv := volumes[plan.Name].Secret; {
	case planName == "" && plan.Name != "":
		t.Errorf("%s: %s mount = %+v, want no plan in this pod", name, path.Dir(PlanPath), plan)
	case planName != "" && (!plan.ReadOnly || pv == nil || pv.SecretName != planName || len(pv.Items) != 1 || pv.Items[0].Key != path.Base(PlanPath)):
		t.Errorf("%s: %s mount = %+v (%+v), want the Secret %s's plan, read-only", name, path.Dir(PlanPath), plan, pv, planName)
	}
	if !token.ReadOnly || volumes[token.Name].Secret == nil || volumes[token.Name].Secret.SecretName != tokenName {
		t.Errorf("%s: %s mount = %+v, want the Secret %s, read-only", name, path.Dir(TokenPath), token, tokenName)
	}
	if _, ok := mounts["/tmp"]; !ok || volumes[mounts["/tmp"].Name].EmptyDir == nil {
		t.Errorf("%s: no emptyDir on /tmp: the root file system is read-only", name)
	}
}

// flagValue returns the argument after flag in args.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func TestAgentAddrs(t *testing.T) {
	o := Options{Name: "x", Agents: 2}
	if got, want := o.AgentAddrs(), []string{"x-agents-0.x-agents:7070", "x-agents-1.x-agents:7070"}; !slices.Equal(got, want) {
		t.Errorf("AgentAddrs() without a namespace = %q, want %q", got, want)
	}
	o.Namespace = "lt"
	if got, want := o.AgentAddrs(), []string{"x-agents-0.x-agents.lt.svc:7070", "x-agents-1.x-agents.lt.svc:7070"}; !slices.Equal(got, want) {
		t.Errorf("AgentAddrs() in lt = %q, want %q", got, want)
	}
}

func TestManifestsRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		want   []string
	}{
		{"no agents", func(o *Options) { o.Agents = 0 }, []string{"agents: want 1 or more, not 0"}},
		{"upper-case name", func(o *Options) { o.Name = "Load" }, []string{`name "Load"`}},
		{"name starting with a digit (a Service's is a DNS-1035 label)", func(o *Options) { o.Name = "1x" }, []string{`name "1x"`}},
		{"name too long for the last agent's hostname", func(o *Options) { o.Name = strings.Repeat("a", 55); o.Agents = 100 }, []string{"too long", "-agents-99"}},
		{"bad namespace", func(o *Options) { o.Namespace = "Load_Test" }, []string{`namespace "Load_Test"`}},
		{"bad cpu", func(o *Options) { o.CPU = "two" }, []string{`cpu "two": want a Kubernetes quantity`}},
		{"zero memory", func(o *Options) { o.Memory = "0" }, []string{`memory "0": want more than zero`}},
		{"no image", func(o *Options) { o.Image = " " }, []string{"image: required", "no image is published", "Dockerfile"}},
		{"a deadline shorter than the run", func(o *Options) { o.Find, o.PlanLoad, o.Deadline = false, time.Hour, time.Hour }, []string{
			"deadline 1h0m0s: shorter than the agents' wait (5m0s) and the plan's load (1h0m0s"}},
		{"a deadline under a second", func(o *Options) { o.Deadline = time.Millisecond }, []string{"deadline: want a duration of a second or more"}},
		{"a negative ttl", func(o *Options) { o.TTL = -time.Hour }, []string{"ttl: want a duration of a second or more"}},
		{"no plan", func(o *Options) { o.Plan = nil }, []string{"plan: empty"}},
		{"plan not UTF-8", func(o *Options) { o.Plan = []byte{0xff, 0xfe} }, []string{"plan: not UTF-8"}},
		{"no token", func(o *Options) { o.Token = "" }, []string{"token: empty"}},
		{"a flag of ours in Args", func(o *Options) { o.Args = []string{"--out=/x.json"} }, []string{"coordinator flag --out: set by ceiling k8s itself"}},
		{"every problem at once", func(o *Options) { o.Agents, o.CPU, o.Token = -1, "x", "" }, []string{"agents:", "cpu", "token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options()
			tt.change(&o)
			_, err := Manifests(o)
			if err == nil {
				t.Fatalf("Manifests = nil error, want one saying %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Manifests = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

func TestWriteNeedsKinds(t *testing.T) {
	m, _ := Manifests(options())
	m.Token.Kind = ""
	if err := Write(&bytes.Buffer{}, m.List()...); err == nil || !strings.Contains(err.Error(), "no apiVersion and kind") {
		t.Errorf("Write(an object without kind) = %v, want an error", err)
	}
}
