package main

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/verbs"
)

// `version` and `--version` say what the binary is: version, revision, Go
// version, and whether the rdma provider is built.
func TestVersion(t *testing.T) {
	rdma := "rdma provider: built (libibverbs.so.1 is loaded when used)"
	if !verbs.CgoBuilt {
		rdma = "rdma provider: " + verbs.NoCgo
	}
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, args)
		out := stdout.String()
		if code != exitOK || stderr.Len() != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		for _, want := range []string{"xrcbench " + host.Version() + "\n", "\nrevision: ", "\ngo: " + runtime.Version(), "\n" + rdma + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("version and --version differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	var stdout, stderr bytes.Buffer
	if code := run(&stdout, &stderr, []string{"version", "extra"}); code != exitUsage {
		t.Errorf("version extra: exit %d, want %d", code, exitUsage)
	}
}

// Every command a user can call shows examples in its --help, as the
// README promises (report and compare once had none).
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			// cobra's own help and completion commands are not ours to
			// document; hidden commands (worker) are not for users.
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			seen++
			args := append(strings.Fields(strings.TrimPrefix(sub.CommandPath(), "xrcbench")), "--help")
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, args)
			out := stdout.String()
			i := strings.Index(out, "\nExamples:\n")
			if code != exitOK || i < 0 || !strings.Contains(out[i:], "  xrcbench ") {
				t.Errorf("xrcbench %s: exit %d, no Examples section with an xrcbench command:\n%s", strings.Join(args, " "), code, out)
			}
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	if seen < 9 {
		t.Errorf("walked %d commands, want at least the 9 of the CLI", seen)
	}
}

// Exit statuses: only input the CLI marks as bad is exit 2; anything else
// that goes wrong is exit 1 (a plain error once fell through to 2).
func TestExitStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no arguments: help", nil, exitOK},
		{"help", []string{"--help"}, exitOK},
		{"unknown command", []string{"bogus"}, exitUsage},
		{"unknown flag", []string{"list", "--bogus"}, exitUsage},
		{"unexpected argument", []string{"list", "extra"}, exitUsage},
		{"bad flag value", []string{"run", "--procs", "x"}, exitUsage},
		{"bad value", []string{"run", "--procs", "0"}, exitUsage},
		{"negative rate", []string{"run", "--rate", "-5"}, exitUsage},
		{"rate and rate-total", []string{"run", "--rate", "5", "--rate-total", "10"}, exitUsage},
		{"arrival without a rate", []string{"run", "--arrival", "poisson"}, exitUsage},
		{"unknown arrival", []string{"run", "--rate", "5", "--arrival", "bursty"}, exitUsage},
		{"no batch", []string{"run", "--batch-ops", "0"}, exitUsage},
		{"no batch time", []string{"run", "--batch-time", "0s"}, exitUsage},
		{"missing argument", []string{"compare", "a"}, exitUsage},
		{"missing folder", []string{"report", "/nonexistent/run"}, exitUsage},
		{"help command", []string{"help", "run"}, exitOK},
		{"completion", []string{"completion", "bash"}, exitOK},
		{"completion, extra argument", []string{"completion", "bash", "extra"}, exitUsage},
		{"help, unknown command", []string{"help", "bogus"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, tt.args)
			if code != tt.code {
				t.Errorf("%v: exit %d, want %d; stderr %q", tt.args, code, tt.code, stderr.String())
			}
			if tt.code != exitOK && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%v: stderr %q, want one line", tt.args, stderr.String())
			}
		})
	}
	// A command that fails with an error nobody marked is a failure, not
	// bad usage.
	root := newRoot(io.Discard, io.Discard)
	root.AddCommand(&cobra.Command{Use: "fail-plainly", RunE: func(*cobra.Command, []string) error {
		return io.ErrUnexpectedEOF
	}})
	if code := exitCode(root, []string{"fail-plainly"}, io.Discard); code != exitFailed {
		t.Errorf("a plain error: exit %d, want %d", code, exitFailed)
	}
}

// --help is a synopsis that a terminal holds (issue: run --help was 146
// lines): without its flags at most helpSynopsisLines, where the rest is
// said; `xrcbench help CMD` gives the whole description and every example.
func TestHelpIsASynopsis(t *testing.T) {
	const helpSynopsisLines = 20
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			path := strings.Fields(strings.TrimPrefix(sub.CommandPath(), "xrcbench"))
			var short, long bytes.Buffer
			if code := run(&short, io.Discard, append(path, "--help")); code != exitOK {
				t.Errorf("%s --help: exit %d", sub.CommandPath(), code)
			}
			if code := run(&long, io.Discard, append([]string{"help"}, path...)); code != exitOK {
				t.Errorf("help %s: exit %d", sub.CommandPath(), code)
			}
			var lines int
			inFlags := false
			for _, l := range strings.Split(short.String(), "\n") {
				switch {
				case strings.HasSuffix(l, "Flags:"):
					inFlags = true
				case l == "":
					inFlags = false
				}
				if !inFlags {
					lines++
				}
			}
			if lines > helpSynopsisLines {
				t.Errorf("%s --help: %d lines besides the flags, want at most %d:\n%s", sub.CommandPath(), lines, helpSynopsisLines, short.String())
			}
			for _, text := range append(strings.Split(sub.Long, "\n\n"), strings.Split(sub.Example, "\n\n")...) {
				if !strings.Contains(long.String(), strings.TrimSpace(text)) {
					t.Errorf("help %s lacks %q", sub.CommandPath(), text)
				}
			}
			if short.Len() < long.Len() && !strings.Contains(short.String(), "xrcbench help "+strings.Join(path, " ")) {
				t.Errorf("%s --help leaves text out without saying where it is", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
}
