package draft

import (
	"testing"
)

func TestOpenAPIDemo(t *testing.T) {
	for _, o := range []Options{{}, {Login: "login", Unsafe: true}} {
		d, err := FromOpenAPI("../../docs/examples/demo-api.openapi.yaml", o)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\nnotes: %q\nenv: %v", d.YAML, d.Notes, d.Env)
		t.Setenv("CEILING_BEARER_AUTH", "x")
		parsed(t, d)
	}
}
