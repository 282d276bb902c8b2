package draft

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/inputfile"
)

// Flags are ceiling init's command-line settings, as typed: the source
// (curl commands, a HAR file or an OpenAPI document) and the Options.
type Flags struct {
	Curl    []string
	HAR     string
	OpenAPI string
	Options
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Curl, "curl", nil, "a curl command line, one scenario (repeatable), or @FILE: a file of curl commands")
	fs.StringVar(&f.HAR, "har", "", "a browser's recording (Chrome or Firefox: Save all as HAR)")
	fs.StringVar(&f.OpenAPI, "openapi", "", "an OpenAPI 3.0 or 3.1 document (YAML or JSON)")
	fs.BoolVar(&f.Flow, "flow", false, "--har: one flow of the requests in recorded order, instead of a weighted mix of the endpoints")
	fs.BoolVar(&f.KeepStatic, "keep-static", false, "--har: keep static assets (scripts, styles, images, fonts)")
	fs.BoolVar(&f.Unsafe, "unsafe", false, "--openapi: include operations of unsafe methods (POST, PUT, PATCH, DELETE)")
	fs.StringVar(&f.Login, "login", "", "--openapi: the operation that logs in (operationId or \"METHOD /path\"): the plan's login, its token the bearer token of the others")
	fs.StringVar(&f.Target, "target", "", "the base URL to load, instead of the source's (the recorded host, the document's server)")
	fs.StringArrayVar(&f.Secrets, "secret", nil, "a header, query parameter or body field whose value is a secret, beyond those named so (repeatable)")
}

// Draft checks the flags, reads the source and drafts the plan.
func (f *Flags) Draft(ctx context.Context) (*Draft, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	switch {
	case f.HAR != "":
		data, err := readFile(ctx, f.HAR, MaxHARBytes)
		if err != nil {
			return nil, err
		}
		return FromHAR(f.HAR, data, f.Options)
	case f.OpenAPI != "":
		return FromOpenAPI(ctx, f.OpenAPI, f.Options)
	}
	srcs, err := f.curlSources(ctx)
	if err != nil {
		return nil, err
	}
	return FromCurl(ctx, srcs, f.Options)
}

// check says, all at once, what is wrong with the flags: one source, the
// options of the others left out, --target a base URL (which it trims of
// its last slashes).
func (f *Flags) check() error {
	var sources []string
	if len(f.Curl) > 0 {
		sources = append(sources, "--curl")
	}
	if f.HAR != "" {
		sources = append(sources, "--har")
	}
	if f.OpenAPI != "" {
		sources = append(sources, "--openapi")
	}
	var bad []string
	switch len(sources) {
	case 0:
		bad = append(bad, "say what to draft the plan from: --curl 'curl ...', --har FILE or --openapi FILE")
	case 1:
	default:
		bad = append(bad, fmt.Sprintf("%s: one source at a time", strings.Join(sources, " and ")))
	}
	if f.HAR == "" && (f.Flow || f.KeepStatic) {
		bad = append(bad, "--flow and --keep-static: only with --har")
	}
	if f.OpenAPI == "" && (f.Unsafe || f.Login != "") {
		bad = append(bad, "--unsafe and --login: only with --openapi")
	}
	if f.Target != "" {
		u, err := url.Parse(f.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad = append(bad, fmt.Sprintf("--target %q: want a base URL such as http://127.0.0.1:8080, without ?query or #fragment", f.Target))
		}
		f.Target = strings.TrimRight(f.Target, "/")
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "\n"))
	}
	return nil
}

// curlSources are the --curl arguments: each a command line, or @FILE, a
// file of them read whole.
func (f *Flags) curlSources(ctx context.Context) ([]Source, error) {
	var srcs []Source
	for i, c := range f.Curl {
		name, ok := strings.CutPrefix(c, "@")
		if !ok {
			srcs = append(srcs, Source{Name: fmt.Sprintf("--curl %d", i+1), Text: c})
			continue
		}
		data, err := readFile(ctx, name, maxCurlBytes)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, Source{Name: name, Text: string(data), Dir: filepath.Dir(name)})
	}
	return srcs, nil
}

// readFile reads a source file of at most limit bytes: a regular file,
// a pipe or a device, never past the limit, until ctx ends.
func readFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return inputfile.Read(ctx, name, limit)
}
