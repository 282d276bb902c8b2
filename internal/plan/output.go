package plan

import (
	"fmt"
	"net/url"
	"strings"
)

// An OutputKind is a kind of live output: KIND in KIND=TARGET, as a plan's
// outputs: and --output name one. OutputKinds lists them; the package
// that starts the outputs starts one of each kind.
type OutputKind struct {
	// Name is the KIND: "prometheus".
	Name string
	// Target says what TARGET is, in messages and help: "URL".
	Target string
	// Writes says what the output writes, in help: "remote write, every
	// second".
	Writes string

	// check says what is wrong with a target, if anything; nil takes any
	// target but an empty one.
	check func(target string) error
}

// Kinds of live output.
const (
	// OutputPrometheus pushes the live series to a Prometheus
	// remote-write receiver at an http(s) URL, every second.
	OutputPrometheus = "prometheus"
	// OutputJSON writes a JSON line per second and per finished step to
	// a file.
	OutputJSON = "json"
)

// OutputKinds are the kinds of live output, in the order messages and
// help list them.
var OutputKinds = []OutputKind{
	{Name: OutputPrometheus, Target: "URL", Writes: "remote write, every second", check: remoteWriteURL},
	{Name: OutputJSON, Target: "FILE", Writes: "JSON lines"},
}

// OutputsHelp lists the kinds of live output for --help, each with what it
// writes: "prometheus=URL (remote write, every second) or json=FILE (JSON
// lines)".
func OutputsHelp() string {
	var kinds []string
	for _, k := range OutputKinds {
		kinds = append(kinds, fmt.Sprintf("%s=%s (%s)", k.Name, k.Target, k.Writes))
	}
	return strings.Join(kinds, " or ")
}

// outputForms lists the kinds of live output for a message:
// "prometheus=URL or json=FILE".
func outputForms() string {
	var kinds []string
	for _, k := range OutputKinds {
		kinds = append(kinds, k.Name+"="+k.Target)
	}
	return strings.Join(kinds, " or ")
}

// CheckOutput checks one live output, "KIND=TARGET", a kind of
// OutputKinds: prometheus=URL (an http or https URL of a remote-write
// receiver) or json=FILE.
func CheckOutput(spec string) error {
	kind, target, ok := strings.Cut(spec, "=")
	if !ok || target == "" {
		return fmt.Errorf("want KIND=TARGET (%s), not %q", outputForms(), spec)
	}
	for _, k := range OutputKinds {
		switch {
		case k.Name != kind:
		case k.check == nil:
			return nil
		default:
			return k.check(target)
		}
	}
	return fmt.Errorf("unknown output %q in %q: want %s", kind, spec, outputForms())
}

// remoteWriteURL checks the target of prometheus=URL: the http(s) URL of
// a remote-write receiver.
func remoteWriteURL(target string) error {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("prometheus=%s: want the http(s) URL of a remote-write receiver, e.g. http://127.0.0.1:9090/api/v1/write", secretless(target))
	}
	return nil
}
