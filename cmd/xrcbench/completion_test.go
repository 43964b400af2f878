package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// completeInBash is a line typed into bash followed by TAB (COMP_TYPE 9)
// or TAB TAB (63, the list), completed by the function the script
// registered for xrcbench (complete -p), as readline would call it. It
// prints one candidate a line.
const completeInBash = `
. "$BASH_COMPLETION_FILE" || exit 3
. "$1" || exit 3
fn=$(complete -p xrcbench 2>/dev/null | sed -n 's/.*-F \([^ ]*\) xrcbench$/\1/p')
[ -n "$fn" ] || { echo "the script registered no completion for xrcbench" >&2; exit 3; }
COMP_LINE=$2
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_TYPE=$3
COMPREPLY=()
"$fn" xrcbench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
`

// The script `xrcbench completion bash` writes completes in bash itself:
// commands, flags, and the values of --workload, --provider and --device
// (it once completed nothing: every __complete call was refused as an
// unknown command). cobra's script needs the bash-completion package
// (_get_comp_words_by_ref), as the README says.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Skip(t, testenv.Tool, "no bash here")
	}
	bin := engineBinary(t)
	script := filepath.Join(t.TempDir(), "xrcbench.bash")
	code, out, errOut := runProcess(exec.Command(bin, "completion", "bash"))
	if code != 0 || errOut != "" {
		t.Fatalf("completion bash: exit %d, stderr %q", code, errOut)
	}
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	var providers []string
	for _, p := range verbs.Providers() {
		providers = append(providers, p.Name)
	}
	fake, err := filepath.Abs(filepath.Join("..", "..", "build", "fakeverbs"))
	if err != nil {
		t.Fatal(err)
	}
	_, fakeErr := os.Stat(filepath.Join(fake, "libibverbs.so.1"))

	tests := []struct {
		name, line string
		compType   string // 9: TAB, 63: TAB TAB
		want       []string
		double     string // the test double's devices (XRCBENCH_FAKEVERBS_DEVICES), "" without it
	}{
		{"a command", "xrcbench ru", "9", []string{"run"}, ""},
		{"commands by prefix", "xrcbench co", "63", []string{"compare", "completion", "conform"}, ""},
		{"a flag", "xrcbench run --worklo", "9", []string{"--workload"}, ""},
		{"the built-in workloads", "xrcbench run --workload ", "63", workloads.Names(), ""},
		{"workloads by prefix", "xrcbench sweep --workload st", "63", []string{"steady", "storm"}, ""},
		{"one workload", "xrcbench run --workload life", "9", []string{"lifecycle"}, ""},
		{"the providers", "xrcbench run --provider ", "63", providers, ""},
		{"the providers of qualify", "xrcbench qualify --provider s", "9", []string{"sim"}, ""},
		{"the sim's device", "xrcbench run --device ", "9", []string{verbs.SimDeviceName}, ""},
		{"the sim's device after -d", "xrcbench sweep -d ", "9", []string{verbs.SimDeviceName}, ""},
		// Enumerated values, never the folder's files.
		{"the QP states", "xrcbench run --qp-state ", "63", []string{"init", "reset", "rtr"}, ""},
		{"an arrival", "xrcbench run --arrival p", "9", []string{"poisson"}, ""},
		{"the progress modes", "xrcbench sweep --progress ", "63", []string{"always", "auto", "never"}, ""},
		{"compare's formats", "xrcbench compare --format ", "63", []string{"json", "md", "text"}, ""},
		{"export's formats", "xrcbench export --format b", "9", []string{"bencher"}, ""},
		{"the sim's semantics", "xrcbench conform --sim-semantics legacy", "63", []string{"legacy", "legacy-mlnx"}, ""},
		{"the double's devices", "xrcbench run --provider rdma --device ", "63", []string{"xbfake0", "xbnoxrc0"}, "xbfake0,xbnoxrc0:noxrc"},
		{"a device of the double for conform", "xrcbench conform --provider legacy --device xbf", "9", []string{"xbfake0"}, "xbfake0,xbnoxrc0:noxrc"},
	}
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		testenv.Skip(t, testenv.Tool, "bash-completion is not installed (%s): apt-get install bash-completion", bashCompletion)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "BASH_COMPLETION_FILE="+bashCompletion)
			if tt.double != "" {
				if fakeErr != nil {
					testenv.Skip(t, testenv.Double, "it is not built (%s): run make fakeverbs", fake)
				}
				env = append(env, "LD_LIBRARY_PATH="+fake, "XRCBENCH_FAKEVERBS_DIR="+filepath.Join(t.TempDir(), "state"),
					"XRCBENCH_FAKEVERBS_DEVICES="+tt.double)
			}
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", completeInBash, "bash", script, tt.line, tt.compType)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%q: %v\n%s", tt.line, err, stderr.String())
			}
			got := candidates(stdout.String())
			if !slices.Equal(got, tt.want) {
				t.Errorf("%q<TAB>: completed %q, want %q\nCOMPREPLY:\n%s\nstderr:\n%s", tt.line, got, tt.want, stdout.String(), stderr.String())
			}
		})
	}
}

// candidates are the names in COMPREPLY, one a line: the list (TAB TAB)
// pads each and adds its description in parentheses; a single completion
// stands alone, with the space bash adds after it.
func candidates(compreply string) []string {
	var out []string
	for _, line := range strings.Split(compreply, "\n") {
		if name, _, _ := strings.Cut(line, "  ("); strings.TrimSpace(name) != "" {
			out = append(out, strings.TrimSpace(name))
		}
	}
	slices.Sort(out)
	return out
}

// A mistyped flag or workload name is bad usage whose one line names what
// was probably meant, as cobra does for a mistyped command.
func TestSuggestions(t *testing.T) {
	tests := []struct {
		args []string
		want string // the whole stderr
	}{
		{[]string{"run", "--wrkload", "steady"}, "xrcbench: unknown flag: --wrkload (did you mean --workload?)\n"},
		{[]string{"sweep", "--proc", "1"}, "xrcbench: unknown flag: --proc (did you mean --procs?)\n"},
		{[]string{"run", "--qp-stat", "init"}, "xrcbench: unknown flag: --qp-stat (did you mean --qp-state?)\n"},
		{[]string{"run", "--bogus-flag"}, "xrcbench: unknown flag: --bogus-flag\n"},
		{[]string{"run", "--workload", "stedy"}, `xrcbench: unknown workload "stedy": did you mean "steady"? built-ins are ` + strings.Join(workloads.Names(), ", ") + ", or give a YAML file\n"},
		{[]string{"list", "--show", "lifecycel"}, `xrcbench: unknown workload "lifecycel": did you mean "lifecycle"? built-ins are ` + strings.Join(workloads.Names(), ", ") + ", or give a YAML file\n"},
		{[]string{"run", "--workload", "nothing-like-it"}, `xrcbench: unknown workload "nothing-like-it": built-ins are ` + strings.Join(workloads.Names(), ", ") + ", or give a YAML file\n"},
		{[]string{"rnu"}, `xrcbench: unknown command "rnu" for "xrcbench" Did you mean this? run`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, tt.args)
		if code != exitUsage || stdout.Len() != 0 || strings.TrimSpace(stderr.String()) != strings.TrimSpace(tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tt.args, code, stdout.String(), stderr.String(), exitUsage, tt.want)
		}
	}
}

// `completion` with a shell it has no script for is bad usage, one line
// and exit 2 (issue 43, item 11): it printed its help and exited 0, so a
// typo installed help text as a completion script. A shell it knows
// prints a script; no shell, its help.
func TestCompletionShells(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string // in stderr when code is 2, else in stdout
	}{
		{[]string{"completion", "bahs"}, exitUsage, `"bahs"`},
		{[]string{"completion", "tcsh"}, exitUsage, `"tcsh"`},
		{[]string{"completion", "bash", "extra"}, exitUsage, "extra"},
		{[]string{"completion", "zsh"}, exitOK, "#compdef xrcbench"},
		{[]string{"completion"}, exitOK, "Usage:"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			if tt.code == exitUsage {
				checkOneLine(t, stderr)
				if !strings.Contains(stderr, tt.want) || stdout != "" {
					t.Errorf("stderr %q, stdout %q: want %q named and nothing on stdout", stderr, stdout, tt.want)
				}
			} else if !strings.Contains(stdout, tt.want) {
				t.Errorf("stdout does not hold %q:\n%s", tt.want, stdout)
			}
		})
	}
}

// A value given after a space to a flag whose value is optional (issue 43,
// item 11): pflag reads `--pin cpu` as --pin alone and an argument, which
// was reported as `unknown command "cpu"`. The refusal says to use "=".
func TestSpacedOptionalValue(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--pin", "cpu", "--duration", "1s"}, `--pin cpu: --pin takes its value after "=": use --pin=cpu`},
		{[]string{"sweep", "--pin", "none", "--duration", "1s"}, "use --pin=none"},
		{[]string{"run", "--fleet-sync", "30s", "--duration", "1s"}, "use --fleet-sync=30s"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
			}
			checkOneLine(t, stderr)
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q, want %q", stderr, tt.want)
			}
		})
	}
	// Not for a stray argument with the flag given a value.
	code, _, stderr := runCLI("run", "--pin=cpu", "stray", "--duration", "1s")
	if code != exitUsage || !strings.Contains(stderr, `unknown command "stray"`) {
		t.Errorf("--pin=cpu stray: exit %d, stderr %q; want 2 naming the stray argument", code, stderr)
	}
}
