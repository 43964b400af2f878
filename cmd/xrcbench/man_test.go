package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The man pages are written from the commands themselves: one per command
// a user can call (no more, none missing), and each, as man shows it,
// says what the command's --help says: its description paragraph by
// paragraph, unmangled by the Markdown they pass through ("<kind>.hlog"
// once lost "<kind>"), and every flag.
func TestManPages(t *testing.T) {
	manBin, err := exec.LookPath("man")
	if err != nil {
		t.Skip("man (man-db) is not installed: apt-get install man-db")
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(&stdout, &stderr, []string{manCommand, dir}); code != exitOK {
		t.Fatalf("%s: exit %d: %s", manCommand, code, stderr.String())
	}
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() && !noPage(sub) {
				walk(sub)
			}
		}
	}
	root := newRoot(io.Discard, io.Discard)
	walk(root)
	// PowerShell's completion has no page (nothing installs its script),
	// though the command stays, in --help too.
	if ps, _, err := root.Find([]string{"completion", "powershell"}); err != nil || ps.Hidden || !ps.IsAvailableCommand() {
		t.Fatalf("completion powershell is no longer an available command (%v): noManPage is stale", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "xrcbench-completion-powershell.1")); err == nil {
		t.Errorf("xrcbench-completion-powershell.1 written: no package installs PowerShell's completion")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("man pages %q, want one per command: %q", got, want)
	}
	if len(want) < 12 {
		t.Fatalf("only %d pages: %q", len(want), want)
	}

	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		page := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		cmd := exec.Command(manBin, "-l", filepath.Join(dir, page))
		// Wide enough that man breaks no line, so hyphenates no word.
		cmd.Env = append(os.Environ(), "MANWIDTH=10000", "MANPAGER=cat", "PAGER=cat", "LC_ALL=C.UTF-8")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("man -l %s: %v", page, err)
			return
		}
		shown := oneLine(string(out))
		texts := []string{c.Short}
		for _, para := range strings.Split(c.Long, "\n\n") {
			texts = append(texts, para)
		}
		for _, text := range texts {
			if text = oneLine(text); text != "" && !strings.Contains(shown, text) {
				t.Errorf("%s does not show %q", page, text)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !strings.Contains(shown, "--"+f.Name) {
				t.Errorf("%s lacks --%s", page, f.Name)
			}
		})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() && !noPage(sub) {
				check(sub)
			}
		}
	}
	check(newRoot(io.Discard, io.Discard))
}

// noPage says whether c is one of the commands writeManPages leaves out.
func noPage(c *cobra.Command) bool {
	return slices.Contains(noManPage, strings.TrimPrefix(c.CommandPath(), "xrcbench "))
}
