package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ceiling-dev/ceiling/internal/control"
)

// Version is set at build time with -ldflags "-X ...cli.Version=v1.2.3";
// otherwise the module's build information is used.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "devel-" + s.Value[:12]
			}
		}
	}
	return "devel"
}

// env is what a command may touch of the outside world.
type env struct {
	ctx      context.Context
	stdout   io.Writer
	stderr   io.Writer
	terminal bool     // stderr is a terminal
	args     []string // the whole command line, for the reproduce line
	// columns is how wide the terminal tables may be: stdout's terminal's
	// width, else $COLUMNS; 0 when neither is known (stdout is a pipe or
	// a file), and then the tables are whole.
	columns int
	// life is told what the commands start that must not outlive an
	// abort (run.Options.Lifecycle); nil keeps nothing.
	life *control.Lifecycle
}

// tableWidth is the width the step table is fitted to (report.TextWidth):
// e.columns, or 0 (every column) with --wide.
func (e *env) tableWidth(wide bool) int {
	if wide {
		return 0
	}
	return e.columns
}

// columnsOf returns the width of stdout's terminal, else $COLUMNS (a
// positive number), else 0.
func columnsOf(stdout io.Writer) int {
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// Main runs the command line args (without the program name) and returns the
// exit code. ctx is cancelled on the first interrupt. life is given what the
// commands start that must not outlive ceiling (targets, their commands,
// containers, cgroups), for the caller to Abort at a second interrupt; nil
// keeps nothing (the commands still stop all of it when they end).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, life *control.Lifecycle) ExitCode {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, args: args, columns: columnsOf(stdout), life: life}
	if f, ok := stderr.(*os.File); ok {
		e.terminal = term.IsTerminal(int(f.Fd()))
	}
	root := newRoot(e)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(flagError)
	groupUsage(root)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, ours := codeOf(err)
	if code != ExitThreshold && code != ExitInterrupted {
		fmt.Fprintf(stderr, "ceiling: %v\n", err)
		if !ours && cmd != nil {
			fmt.Fprintf(stderr, "See '%s --help'.\n", cmd.CommandPath())
		}
	}
	return code
}

// newRoot is the ceiling command with its subcommands, for e.
func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "ceiling",
		Short:         "Find how far a web service goes before it falls over, and prove the number.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		// an unknown command or flag suggests those this close to it
		SuggestionsMinimumDistance: 2,
	}
	root.AddCommand(runCmd(e), findCmd(e), validateCmd(e), versionCmd(e), demoCmd(e), demoTargetCmd(e), mockCmd(e), reportCmd(e), compareCmd(e), sweepCmd(e), soakCmd(e), agentCmd(e), mergeCmd(e), k8sCmd(e), initCmd(e))
	return root
}

func versionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ceiling's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(e.stdout, "ceiling %s\n", version())
			return nil
		},
	}
}
