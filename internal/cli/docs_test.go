package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// The shell blocks of README.md and docs/*.md are what a new user copies.
// Each carries a marker, an HTML comment on the line before its fence, that
// says how it is tested:
//
//	<!-- doc-test: run -->            run as written, in a fresh folder
//	<!-- doc-test: run; setup: CMD --> the same, after CMD (e.g. a plan.yaml)
//	<!-- doc-test: run; needs: cgroups --> skipped, saying why, where the
//	                                   machine cannot (a sweep's limits)
//	<!-- doc-test: serve -->           each line starts a server: it must
//	                                   still be running after a second
//	<!-- doc-test: ci -->              run by .ci/run (the demo, the tests),
//	                                   which cmd/ceiling's TestCIRunsTheCIBlocks holds
//	<!-- doc-test: illustrative: WHY --> not run: it needs what a test
//	                                   cannot have (a cluster, other machines,
//	                                   the user's own server)
//
// A block is run by a shell interpreter (mvdan.cc/sh) in which `ceiling`
// (and `go run ./cmd/ceiling`) is ceiling itself, in this process: a
// command that exits 2 (bad input) or 3 (could not run) fails the test.
// The blocks run as written, with two changes: `run`, `find` and `sweep`
// get short steps (docShort, docSegments), and `soak` a short length
// (docSoak), so that a block of minutes or hours runs in seconds, and the
// fixed addresses of the built-in target (127.0.0.1:8080) and the mock
// (127.0.0.1:9911) become free ports of the block's own (docPorts), in the
// block and in the example plans it reads.

// docShort is appended to every run, find and sweep of a block,
// docSegments to a run of a segment (--segment i/N), and docSoak to every
// soak: hours become seconds. The segments of a run must run their steps
// at the same time (merge refuses steps that share less than half the
// shortest window), and steps of 100 ms started by processes one after the
// other missed that, on a busy machine, by tens of milliseconds.
var (
	docShort    = []string{"--step", "100ms", "--warmup", "0s"}
	docSegments = []string{"--step", "1s", "--warmup", "50ms"}
	docSoak     = []string{"--for", "3s", "--window", "1s", "--warmup", "0s", "--horizon", "9s"}
)

// docBlock is one shell block of the documentation.
type docBlock struct {
	file   string // relative to the repository
	line   int    // of the opening fence
	text   string
	marker string // the marker's text after "doc-test:"; "" when there is none
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docBlocks reads the shell blocks of README.md and docs/*.md.
func docBlocks(t *testing.T, root string) []docBlock {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	fence := regexp.MustCompile("^```(sh|bash|shell|console)\\s*$")
	marker := regexp.MustCompile(`^<!--\s*doc-test:\s*(.*?)\s*-->\s*$`)
	var blocks []docBlock
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			if !fence.MatchString(lines[i]) {
				continue
			}
			b := docBlock{file: filepath.ToSlash(rel), line: i + 1}
			if i > 0 {
				if m := marker.FindStringSubmatch(lines[i-1]); m != nil {
					b.marker = m[1]
				}
			}
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
			b.text = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// docMarker is a parsed marker.
type docMarker struct {
	kind  string // run, serve, ci, illustrative
	why   string // illustrative's reason
	setup string // run's setup commands, a line each
	needs string // run's requirement: "cgroups"
}

func parseDocMarker(s string) (docMarker, error) {
	var m docMarker
	if why, ok := strings.CutPrefix(s, "illustrative:"); ok {
		m.kind, m.why = "illustrative", strings.TrimSpace(why)
		if m.why == "" {
			return m, errors.New("illustrative: say why it is not run")
		}
		return m, nil
	}
	parts := strings.Split(s, ";")
	head := strings.TrimSpace(parts[0])
	m.kind, m.why, _ = strings.Cut(head, ":")
	m.kind, m.why = strings.TrimSpace(m.kind), strings.TrimSpace(m.why)
	if !slices.Contains([]string{"run", "serve", "ci", "illustrative"}, m.kind) {
		return m, fmt.Errorf("unknown kind %q: want run, serve, ci or illustrative", m.kind)
	}
	if m.kind == "illustrative" {
		return m, errors.New("illustrative: say why it is not run")
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, ":")
		switch strings.TrimSpace(k) {
		case "setup":
			m.setup += strings.TrimSpace(v) + "\n"
		case "needs":
			m.needs = strings.TrimSpace(v)
		default:
			return m, fmt.Errorf("unknown key %q: want setup or needs", k)
		}
	}
	return m, nil
}

// TestDocShellBlocks runs every runnable shell block of the documentation
// and checks that every other one says why it is not run.
func TestDocShellBlocks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the blocks are POSIX shell")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := docBlocks(t, root)
	if len(blocks) == 0 {
		t.Fatal("no shell blocks found in README.md and docs/")
	}
	env := docCeilingOnPath(t)
	ran := 0
	for _, b := range blocks {
		if b.marker == "" {
			t.Errorf("%s: a shell block with no <!-- doc-test: ... --> marker on the line before it (run, serve, ci or illustrative: why)", b)
			continue
		}
		m, err := parseDocMarker(b.marker)
		if err != nil {
			t.Errorf("%s: marker %q: %v", b, b.marker, err)
			continue
		}
		// Every block, run or not, must be valid shell.
		if _, err := syntax.NewParser().Parse(strings.NewReader(b.text), b.String()); err != nil {
			t.Errorf("%s: not valid shell: %v", b, err)
			continue
		}
		switch m.kind {
		case "run", "serve":
			t.Run(strings.NewReplacer("/", "_", ".", "_", ":", "_").Replace(b.String()), func(t *testing.T) {
				// Each block has its own folder, ports and ceiling
				// processes: the blocks run side by side.
				t.Parallel()
				if m.needs == "cgroups" && !docCgroupsWritable() {
					t.Skip("needs writable cgroup v1 cpu and memory controllers (root on Linux), as a sweep's limits do")
				}
				start := time.Now()
				if m.kind == "serve" {
					docServe(t, root, env, b)
				} else {
					docRun(t, root, env, b, m.setup)
				}
				t.Logf("%s took %v", b, time.Since(start).Round(time.Millisecond))
			})
			ran++
		}
	}
	if ran == 0 {
		t.Error("no block is run: a marker parser that runs nothing tests nothing")
	}
}

// docCeilingOnPath returns the blocks' environment: a PATH whose first
// `ceiling` is this test binary acting as ceiling, for the block's own
// ceiling commands and those a ceiling starts itself (a sweep's --cmd).
func docCeilingOnPath(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ceiling")
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", asCeiling, exe)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	return append(env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// docPorts gives a block's fixed addresses free ports of its own: the
// built-in target's 127.0.0.1:8080, the mock's 127.0.0.1:9911 and the live
// page's 127.0.0.1:5665, in the block, its setup and the example plans it
// reads. Only the port changes;
// two test runs on one machine (or a service a user runs on 8080) never
// collide.
type docPorts struct {
	target string // for 127.0.0.1:8080
	*strings.Replacer
}

func newDocPorts(t *testing.T) docPorts {
	target := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	sink := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	page := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	return docPorts{target: target, Replacer: strings.NewReplacer("127.0.0.1:8080", target, "127.0.0.1:9911", sink, "127.0.0.1:5665", page)}
}

// docFolder makes a fresh folder for a block, with docs/examples of the
// repository in it (the blocks name docs/examples/...), their addresses
// given the block's ports.
func docFolder(t *testing.T, root string, ports docPorts) string {
	dir := t.TempDir()
	examples := filepath.Join(dir, "docs", "examples")
	if err := os.MkdirAll(examples, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(filepath.Join(root, "docs", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, "docs", "examples", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(examples, f.Name()), []byte(ports.Replace(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// docArgs turns a command line of a block into ceiling's arguments: nil
// when it is not ceiling. The built-in target without --addr serves on
// the block's own port (target) instead of 127.0.0.1:8080.
func docArgs(args []string, target string) []string {
	switch {
	case len(args) > 0 && args[0] == "ceiling":
		args = args[1:]
	case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/ceiling":
		args = args[3:]
	default:
		return nil
	}
	switch {
	case len(args) > 0 && args[0] == "run" && slices.Contains(args, "--segment"):
		args = append(slices.Clone(args), docSegments...)
	case len(args) > 0 && slices.Contains([]string{"run", "find", "sweep"}, args[0]):
		args = append(slices.Clone(args), docShort...)
	}
	if len(args) > 0 && args[0] == "soak" {
		args = append(slices.Clone(args), docSoak...)
	}
	if len(args) > 0 && args[0] == "demo-target" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--addr") }) {
		args = append(slices.Clone(args), "--addr", target)
	}
	return args
}

// docInterp returns a shell interpreter in dir with environment env, in
// which ceiling is this test binary acting as ceiling, a process of its own
// in dir; wait waits for the ceiling commands it started (those put
// in the background too) once ctx is cancelled, and returns what went
// wrong with them.
func docInterp(t *testing.T, ctx context.Context, dir string, env []string, target string, out *docOutput) (*interp.Runner, func() []string) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		problems []string
	)
	handler := func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(hctx context.Context, args []string) error {
			cargs := docArgs(args, target)
			if cargs == nil {
				err := next(hctx, args)
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s: %v", strings.Join(args, " "), err))
					mu.Unlock()
				}
				return err
			}
			wg.Add(1)
			defer wg.Done()
			// The interpreter's context ends with the block; ctx (the
			// test's) also ends the servers put in the background.
			cctx, cancel := context.WithCancel(hctx)
			defer cancel()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			// The interpreter stops a process its context ends with an
			// interrupt (a server's Ctrl-C), then kills it.
			code := ExitOK
			var status interp.ExitStatus
			switch err := next(cctx, append([]string{"ceiling"}, cargs...)); {
			case errors.As(err, &status):
				code = ExitCode(status)
			case err != nil && cctx.Err() != nil:
				// Stopped at the block's end (os/exec says so in place
				// of the exit status that followed the interrupt).
				code = ExitInterrupted
			case err != nil:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("ceiling %s: %v", strings.Join(cargs, " "), err))
				mu.Unlock()
				return err
			}
			switch code {
			case ExitOK, ExitThreshold, ExitInterrupted, 4:
				// Answers: a threshold failed, compare found a regression
				// or could not tell; a server stopped at the block's end.
			default:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("ceiling %s: exit %d", strings.Join(cargs, " "), code))
				mu.Unlock()
			}
			if code == ExitOK {
				return nil
			}
			return interp.ExitStatus(uint8(code))
		}
	}
	r, err := interp.New(interp.Dir(dir), interp.StdIO(nil, out, out), interp.ExecHandlers(handler),
		interp.Env(expand.ListEnviron(env...)))
	if err != nil {
		t.Fatal(err)
	}
	return r, func() []string {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return problems
	}
}

// docRun runs a block (after its setup) in a fresh folder. Its foreground
// commands run to their end; what it put in the background (a target)
// runs until the block ends. The setup runs in a shell of its own, so
// that a block's `wait` waits for the block's own jobs, not for the
// server its setup started (which it waited for until the test's bound:
// two minutes, and then the block's last commands ran cut short). A
// block still running at the bound fails.
func docRun(t *testing.T, root string, env []string, b docBlock, setup string) {
	ports := newDocPorts(t)
	dir := docFolder(t, root, ports)
	const bound = 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var out docOutput
	var waits []func() []string
	for _, script := range []string{setup, b.text} {
		if script == "" {
			continue
		}
		r, wait := docInterp(t, ctx, dir, env, ports.target, &out)
		waits = append(waits, wait)
		file, err := syntax.NewParser().Parse(strings.NewReader(ports.Replace(script)), b.String())
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range file.Stmts {
			// A failing command is a problem the exec handler notes; the
			// statement's own status is not needed.
			_ = r.Run(ctx, stmt)
			if addr := docServerAddr(stmt, ports.target); stmt.Background && addr != "" {
				docAwait(t, addr) // the next line loads it
			}
		}
	}
	if ctx.Err() != nil {
		t.Errorf("%s: still running after %v", b, bound)
	}
	cancel()
	for _, wait := range waits {
		for _, p := range wait() {
			t.Errorf("%s: %s", b, p)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("%s output:\n%s", b, out.String())
	}
}

// docServerAddr returns the address a server started by stmt listens
// on: the first 127.0.0.1 address on its line, or the built-in target's
// (target: the block's stand-in for 127.0.0.1:8080).
func docServerAddr(stmt *syntax.Stmt, target string) string {
	var text strings.Builder
	syntax.NewPrinter().Print(&text, stmt)
	if m := regexp.MustCompile(`127\.0\.0\.1:\d+`).FindString(text.String()); m != "" {
		return m
	}
	if strings.Contains(text.String(), "demo-target") {
		return target
	}
	return ""
}

// docAwait waits (ten seconds at most) for a listener at addr: a server
// the block put in the background may still be starting.
func docAwait(t *testing.T, addr string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("nothing listens at %s ten seconds after the block started its server", addr)
}

// docServe starts each command of a block alone: each is a server, which
// must still be running after a second (a bad flag ends it at once), and
// is then stopped.
func docServe(t *testing.T, root string, env []string, b docBlock) {
	ports := newDocPorts(t)
	dir := docFolder(t, root, ports)
	file, err := syntax.NewParser().Parse(strings.NewReader(ports.Replace(b.text)), b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range file.Stmts {
		stmt.Background = false
		ctx, cancel := context.WithCancel(context.Background())
		var out docOutput
		r, wait := docInterp(t, ctx, dir, env, ports.target, &out)
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, stmt) }()
		select {
		case err := <-done:
			t.Errorf("%s: line %d ended before it served: %v\n%s", b, b.line+int(stmt.Pos().Line()), err, out.String())
		case <-time.After(time.Second):
		}
		cancel()
		<-done
		for _, p := range wait() {
			t.Errorf("%s: %s", b, p)
		}
	}
}

// docOutput is a block's output: its background servers and its
// foreground commands write to it at once.
type docOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *docOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *docOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// docCgroupsWritable reports whether a sweep can put a target under cgroup
// v1 CPU and memory limits here.
func docCgroupsWritable() bool {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return false
	}
	for _, c := range []string{"cpu", "memory"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, "cgroup.procs")); err != nil {
			return false
		}
	}
	return true
}
