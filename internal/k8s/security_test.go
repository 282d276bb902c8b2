package k8s

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// restricted evaluates a pod template against the restricted Pod Security
// Standard, as the API server's admission does (k8s.io/pod-security-admission's
// own checks, at the latest version), without a cluster. It returns the
// reasons the pod is refused, "" when it is admitted.
func restricted(t *testing.T, pod *corev1.PodTemplateSpec) string {
	t.Helper()
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	res := policy.AggregateCheckResults(eval.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec))
	if res.Allowed {
		return ""
	}
	return res.ForbiddenReason() + ": " + res.ForbiddenDetail()
}

// Both pods, as printed and decoded back, are admitted by the restricted
// Pod Security Standard: a namespace labelled
// pod-security.kubernetes.io/enforce=restricted runs them.
func TestPodsMeetTheRestrictedStandard(t *testing.T) {
	for name, o := range map[string]Options{"find, 3 agents, a network policy": options(), "run, 1 agent": bare()} {
		d := decode(t, manifestsYAML(t, o))
		for _, job := range []batchv1.Job{d.agents, d.coordinator} {
			if why := restricted(t, &job.Spec.Template); why != "" {
				t.Errorf("%s: job/%s's pod is refused by the restricted standard: %s", name, job.Name, why)
			}
		}
	}
}

// The evaluation above can fail: each change to the agents' pod breaks a
// rule of the restricted standard, and is refused with that rule's reason.
func TestRestrictedStandardRefusesEachBreach(t *testing.T) {
	tests := []struct {
		rule   string
		breach func(*corev1.PodSpec)
		want   string
	}{
		{"running as non-root is required", func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil }, "runAsNonRoot != true"},
		{"running as root (user 0) is forbidden", func(s *corev1.PodSpec) { s.SecurityContext.RunAsUser = new(int64(0)) }, "runAsUser=0"},
		{"privilege escalation is forbidden", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = new(true)
		}, "allowPrivilegeEscalation != false"},
		{"every capability must be dropped", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities.Drop = nil }, "unrestricted capabilities"},
		{"no capability may be added (but NET_BIND_SERVICE)", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		}, "capabilities"},
		{"a seccomp profile is required", func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil }, "seccompProfile"},
		{"privileged containers are forbidden", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Privileged = new(true) }, "privileged"},
		{"host namespaces are forbidden", func(s *corev1.PodSpec) { s.HostNetwork = true }, "host namespaces"},
		{"host ports are forbidden", func(s *corev1.PodSpec) { s.Containers[0].Ports[0].HostPort = Port }, "hostPort"},
		{"hostPath volumes are forbidden", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, "hostPath"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d := decode(t, manifestsYAML(t, options()))
			pod := d.agents.Spec.Template
			tt.breach(&pod.Spec)
			why := restricted(t, &pod)
			if why == "" || !strings.Contains(why, tt.want) {
				t.Errorf("the agents' pod with the breach: refused for %q, want a reason naming %q", why, tt.want)
			}
		})
	}
}
