package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// What each kind of launcher needs is one rule, said in the flags' terms
// without a sweep file and in the file's terms, at the field, with one.
func TestLauncherNeeds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		flags   Flags    // the launcher's flags, without a sweep file
		changed []string // the flags given
		file    string   // the same launcher in a sweep file
		want    string   // the flags' problem
		field   string   // the file's
	}{
		{"local without a command", Flags{}, nil, "{}",
			"--cmd: required: the command that starts the target (or a sweep file)", "launcher.command: required for the local launcher"},
		{"docker without an image", Flags{Launcher: "docker", Port: 8080}, []string{"launcher", "port"}, "{kind: docker, port: 8080}",
			"--launcher docker needs --image and --port", "launcher.image: required for the docker launcher"},
		{"podman without a port", Flags{Launcher: "podman", Image: "app"}, []string{"launcher", "image"}, "{kind: podman, image: app}",
			"--launcher podman needs --image and --port", "launcher.port: required for the podman launcher"},
		{"docker on a port past 65535", Flags{Launcher: "docker", Image: "app", Port: 65536}, []string{"launcher", "image", "port"}, "{kind: docker, image: app, port: 65536}",
			"--launcher docker needs --image and --port", "launcher.port: required for the docker launcher"},
		{"command without apply", Flags{Launcher: "command", Teardown: "x"}, []string{"launcher", "teardown"}, "{kind: command, teardown: x}",
			"--launcher command needs --apply", "launcher.apply: required for the command launcher"},
		{"no such kind", Flags{Launcher: "kubernetes"}, []string{"launcher"}, "{kind: kubernetes}",
			`launcher "kubernetes": want local, docker, podman or command`, `launcher.kind: want local, docker, podman or command, not "kubernetes"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.flags
			f.Configs = "1@1/512m"
			_, err := f.Spec("", plan.Quick{URL: "http://127.0.0.1:1"}, func(name string) bool { return slices.Contains(tt.changed, name) }, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Spec(flags) = %v, want %q", err, tt.want)
			}
			_, err = LoadFile(sweepFile(t, "plan: plan.yaml\nconfigs: [1@1/512m]\nlauncher: "+tt.file+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("LoadFile = %v, want %q", err, tt.field)
			}
		})
	}
}
