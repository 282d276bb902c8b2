package k8s

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A plan's credentials (an Authorization header, a key in a login's
// body) and coordinator flags after "--" that hold a secret go into a
// Secret, never into a ConfigMap or a Job's spec: the coordinator reads
// the plan from the Secret and gets those flags from its environment,
// filled from the Secret.
func TestSecretsStayInTheSecret(t *testing.T) {
	planFile := writeFile(t, "plan.yaml", testPlan+`http:
  headers: {Authorization: "Bearer plan-header-value"}
login:
  - request: {method: POST, url: /login, json: {password: plan-body-value}}
`)
	f, args, dash := parse(t, planFile, "--agents", "2", "--image", "ceiling:dev", "--",
		"--header", "X-Api-Key: flag-header-value", "--start", "50", "--header=Authorization: Bearer flag-inline-value")
	o, err := f.Options(args, dash)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"plan-header-value", "plan-body-value", "flag-header-value", "flag-inline-value"}
	var inSecrets bytes.Buffer
	for _, obj := range m.List() {
		var b bytes.Buffer
		if err := Write(&b, obj); err != nil {
			t.Fatal(err)
		}
		if s, ok := obj.(*corev1.Secret); ok {
			for _, v := range s.Data {
				inSecrets.Write(v)
			}
			continue
		}
		for _, v := range secrets {
			if strings.Contains(b.String(), v) {
				t.Errorf("%s holds %q, want it in a Secret only:\n%s", kindName(obj), v, b.String())
			}
		}
	}
	for _, v := range secrets {
		if !strings.Contains(inSecrets.String(), v) {
			t.Errorf("no Secret holds %q, want one to (the coordinator needs it)", v)
		}
	}

	// The coordinator gets the flags back from its environment, filled
	// from the Secret, and reads the plan where the Secret is mounted.
	d := decode(t, manifestsYAML(t, o))
	c := d.coordinator.Spec.Template.Spec.Containers[0]
	env := map[string]*corev1.EnvVarSource{}
	for _, e := range c.Env {
		env[e.Name] = e.ValueFrom
	}
	want := []string{"run", PlanPath}
	var refs int
	for _, a := range c.Args[len(c.Args)-5:] {
		name, ok := strings.CutPrefix(a, "$(")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, ")")
		ref := env[name]
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != d.plan.Name {
			t.Errorf("coordinator arg %s: env %+v, want it from the Secret %s", a, ref, d.plan.Name)
			continue
		}
		refs++
	}
	if refs != 2 || !strings.HasPrefix(strings.Join(c.Args, " "), strings.Join(want, " ")) || flagValue(c.Args, "--start") != "50" {
		t.Errorf("coordinator args %q: want the plan file, two flags from the environment and --start 50 as written", c.Args)
	}
	if why := restricted(t, &d.coordinator.Spec.Template); why != "" {
		t.Errorf("the coordinator's pod is refused by the restricted standard: %s", why)
	}
}

// kindName names an object for messages: Kind/name.
func kindName(obj runtime.Object) string {
	if o, ok := obj.(interface{ GetName() string }); ok {
		return obj.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
	}
	return obj.GetObjectKind().GroupVersionKind().Kind
}
