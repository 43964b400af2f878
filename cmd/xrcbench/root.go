package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/verbs"
)

// Exit statuses of the CLI contract.
const (
	exitOK     = 0
	exitFailed = 1 // the run failed, a check failed, a regression was found
	exitUsage  = 2 // bad usage or bad input
	// exitNotJudged: qualify's runs were too disturbed to judge (neither
	// pass nor fail), a status of its own so a CI job can rerun rather
	// than reject.
	exitNotJudged = 3
)

// usageError marks bad usage or bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// failure marks a run that failed after its input was accepted: exit 1.
// Its message is printed unless quiet (the command already said why).
type failure struct {
	err   error
	quiet bool
	code  int // the exit status; 0: exitFailed
}

func (e failure) Error() string { return e.err.Error() }
func (e failure) Unwrap() error { return e.err }

// outputErr marks a failure to write the command's output (a closed pipe,
// a full disk) as a failure, not as bad usage.
func outputErr(err error) error {
	if err == nil {
		return nil
	}
	return failure{err: fmt.Errorf("writing output: %w", err)}
}

// subcommands is filled by one init function per subcommand file.
var subcommands []func(stdout, stderr io.Writer) *cobra.Command

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "xrcbench",
		Short: "Benchmark XRC receive-QP registration on RDMA adapters",
		Long: `xrcbench measures what XRC receive-QP registration costs: ibv_reg_xrc_rcv_qp /
ibv_unreg_xrc_rcv_qp (legacy OFED) and ibv_open_qp / ibv_destroy_qp (rdma-core),
and the refcount-triggered destruction when the last registration goes.

Worker processes x OS-thread-locked goroutines hammer registration on shared XRC
receive QPs; latency histograms are merged, reported and compared.

Providers: sim (an XRC device emulated in shared memory, the default), null (the
harness's own overhead), rdma (rdma-core on real adapters), legacy (old OFED).

How it measures, the XRC semantics S1–S15, and the result.json contract:
docs/design.md in the xrcbench source.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Version = host.Version()
	root.SetVersionTemplate(versionText())
	root.SetFlagErrorFunc(flagError)
	root.PersistentPreRunE = refuseWithoutCgo
	for _, sub := range subcommands {
		root.AddCommand(sub(stdout, stderr))
	}
	// cobra adds these when it executes; here, so that they are found
	// like any command and their argument checks are marked too.
	root.InitDefaultHelpCmd()
	shortHelp(root)
	root.InitDefaultCompletionCmd()
	refuseUnknownShell(root)
	markArgsErrors(root)
	registerCompletions(root)
	return root
}

// refuseUnknownShell makes `completion SHELL` with a shell it has no script
// for bad usage: cobra's completion command has no Run of its own, so it
// printed its help and exited 0 before its argument check (NoArgs) ran,
// and `xrcbench completion bahs > file` installed help text as a script.
// Runnable, its check refuses the word (exit 2, one line); with no shell
// it still prints its help.
func refuseUnknownShell(root *cobra.Command) {
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root {
		return
	}
	comp.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// measuring names the commands that open a device or run the C hot path.
// A binary built without cgo (CGO_ENABLED=0) has no provider, so it
// refuses them in one line; its analysis commands (report, compare,
// export, history, list, version) work as in any build.
var measuring = map[string]bool{"run": true, "sweep": true, "conform": true, "devices": true,
	"calibrate": true, "qualify": true, workerCommand: true}

// refuseWithoutCgo is the root's pre-run: a measuring command in a binary
// built without cgo fails (exit 1, as a provider not built here does: the
// input is fine, this binary cannot do it).
func refuseWithoutCgo(cmd *cobra.Command, _ []string) error {
	if !verbs.CgoBuilt && measuring[cmd.Name()] {
		return failure{err: fmt.Errorf("%s needs a cgo build: this binary was built with CGO_ENABLED=0 (build it with a C compiler: make build)", cmd.Name())}
	}
	return nil
}

// markArgsErrors makes every command's argument check report bad usage:
// cobra's own checks (NoArgs, ExactArgs) return plain errors, and a plain
// error is a failure (exit 1), not bad usage.
func markArgsErrors(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				var u usageError
				if errors.As(err, &u) {
					return err
				}
				if hint := spacedValue(c, args); hint != nil {
					return usageError{hint}
				}
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markArgsErrors(sub)
	}
}

// spacedValue explains a stray argument that is the value of a flag whose
// value is optional (--pin, --fleet-sync), given after a space: pflag reads
// `--pin cpu` as --pin alone and an argument "cpu", which the command
// then called an unknown command. nil when no such flag was given alone.
func spacedValue(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	// The command line as given (exitCode keeps it): the flag alone, then
	// the stray argument.
	raw := strings.Split(c.Root().Annotations[rawArgsKey], "\x00")
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || f.NoOptDefVal == "" {
			return
		}
		for i := 0; i+1 < len(raw); i++ {
			if raw[i] == "--"+f.Name && raw[i+1] == args[0] {
				err = fmt.Errorf("--%s %s: --%s takes its value after \"=\": use --%s=%s", f.Name, args[0], f.Name, f.Name, args[0])
				return
			}
		}
	})
	return err
}

// rawArgsKey is the root's annotation holding the command line, NUL-separated.
const rawArgsKey = "xrcbench.args"

// run is main without the process: it returns the exit status. What it
// prints passes through safetext: device, host and folder names are data,
// and no escape sequence of theirs reaches the terminal.
func run(stdout, stderr io.Writer, args []string) int {
	stdout, stderr = safetext.NewWriter(stdout), safetext.NewWriter(stderr)
	return exitCode(newRoot(stdout, stderr), args, stderr)
}

// exitCode executes root with args and maps the outcome to an exit status.
func exitCode(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[rawArgsKey] = strings.Join(args, "\x00")
	// An unknown command is bad usage; cobra finds that out before any
	// command runs, with a plain error. Find does not know the hidden
	// commands a shell's completion script calls (cobra adds them only
	// when it executes), so those go straight to Execute.
	if _, _, err := root.Find(args); err != nil && !isCompletionRequest(args) {
		fmt.Fprintln(stderr, "xrcbench: "+oneLine(err.Error()))
		return exitUsage
	}
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "xrcbench: "+oneLine(err.Error()))
		return exitUsage
	}
	// Everything else failed after the input was accepted: exit 1. Only
	// errors marked as usage errors (bad flags, arguments, values) exit 2.
	var f failure
	if errors.As(err, &f) {
		if !f.quiet {
			fmt.Fprintln(stderr, "xrcbench: "+oneLine(f.err.Error()))
		}
		if f.code != 0 {
			return f.code
		}
		return exitFailed
	}
	fmt.Fprintln(stderr, "xrcbench: "+oneLine(err.Error()))
	return exitFailed
}

// isCompletionRequest reports whether args are a completion script's
// call (xrcbench __complete ...), which cobra answers itself.
func isCompletionRequest(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
