package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// The man pages are written from the commands themselves: one per command
// a user can call (no more, none missing), and each, as man shows it,
// says what the command's --help says: its description paragraph by
// paragraph, unmangled by the Markdown they pass through ("<kind>.hlog"
// once lost "<kind>"), and every flag. Each also has the sections --help
// lacks (checkExtraSections), and result.json has a page of its own.
func TestManPages(t *testing.T) {
	judgesNoTime(t)
	manBin, err := exec.LookPath("man")
	if err != nil {
		testenv.Skip(t, testenv.Tool, "man (man-db) is not installed: apt-get install man-db")
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
	want = append(want, resultPage+".5")
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

	show := func(page string) (string, bool) {
		cmd := exec.Command(manBin, "-l", filepath.Join(dir, page))
		// Wide enough that man breaks no line, so hyphenates no word.
		cmd.Env = append(os.Environ(), "MANWIDTH=10000", "MANPAGER=cat", "PAGER=cat", "LC_ALL=C.UTF-8")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("man -l %s: %v", page, err)
			return "", false
		}
		return oneLine(string(out)), true
	}
	envNames := readEnvNames(t)
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		page := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		shown, ok := show(page)
		if !ok {
			return
		}
		checkExtraSections(t, page, shown, c, envNames)
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

	// result.json's page: every key of its top level, by results.Result's
	// own JSON names, so a key added there and not here fails.
	page := resultPage + ".5"
	shown, ok := show(page)
	if !ok {
		return
	}
	for _, h := range []string{"NAME " + resultPage + " - the format of a run folder's result.json", "DESCRIPTION", "TOP-LEVEL KEYS", results.Schema, "SEE ALSO"} {
		if !strings.Contains(shown, h) {
			t.Errorf("%s does not show %q", page, h)
		}
	}
	rt := reflect.TypeFor[results.Result]()
	for i := range rt.NumField() {
		key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !regexp.MustCompile(`(^| )` + regexp.QuoteMeta(key) + `( |,)`).MatchString(shown) {
			t.Errorf("%s does not describe result.json's key %q", page, key)
		}
	}
}

// checkExtraSections holds a command's page, as man shows it, to the
// sections cobra/doc does not write: every page says the exit statuses
// (the codes root.go returns, each with its meaning), before SEE ALSO;
// xrcbench(1), run, sweep and qualify also name every environment
// variable the sources read (envNames) and the files a run writes.
func checkExtraSections(t *testing.T, page, shown string, c *cobra.Command, envNames []string) {
	t.Helper()
	exit := strings.Index(shown, "EXIT STATUS")
	if exit < 0 {
		t.Errorf("%s has no EXIT STATUS", page)
		return
	}
	if see := strings.Index(shown, "SEE ALSO"); see >= 0 && see < exit {
		t.Errorf("%s: EXIT STATUS comes after SEE ALSO", page)
	}
	for code, meaning := range map[int]string{exitOK: "Success.", exitFailed: "The run failed", exitUsage: "Bad usage or bad input"} {
		if !strings.Contains(shown[exit:], fmt.Sprintf(" %d %s", code, meaning)) {
			t.Errorf("%s: EXIT STATUS does not say %d %q", page, code, meaning)
		}
	}
	switch c.CommandPath() {
	case "xrcbench", "xrcbench run", "xrcbench sweep", "xrcbench qualify":
	default:
		return
	}
	env, files := strings.Index(shown, "ENVIRONMENT"), strings.Index(shown, "FILES")
	if env < 0 || files < 0 {
		t.Errorf("%s: ENVIRONMENT at %d, FILES at %d: want both", page, env, files)
		return
	}
	for _, name := range envNames {
		if !strings.Contains(shown[env:files], name) {
			t.Errorf("%s: ENVIRONMENT does not name %s, which xrcbench reads", page, name)
		}
	}
	for _, f := range []string{"RUN_DIR/result.json", "RUN_DIR/<kind>.hlog", resultPage + "(5)"} {
		if !strings.Contains(shown[files:], f) {
			t.Errorf("%s: FILES does not name %s", page, f)
		}
	}
}

// readEnvNames are the environment variables the repository's code reads
// (its tests aside): the names passed to os.Getenv, os.LookupEnv or a
// getenv in Go, every "XRCBENCH_..." string constant in Go (those are
// read through constants such as childEnv), and getenv's in the C of the
// providers and the libibverbs test double. At least TMPDIR and the test
// double's must be among them, or the scan itself is broken.
func readEnvNames(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	goRead := regexp.MustCompile(`(?:Getenv|LookupEnv|getenv)\("([A-Z][A-Za-z0-9_]*)"\)|"(XRCBENCH_[A-Z0-9_]+)"`)
	cRead := regexp.MustCompile(`getenv\("([A-Z][A-Za-z0-9_]*)"\)`)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "build", "bin", "runs", "node_modules":
				return filepath.SkipDir
			case "testenv": // internal/testenv: read by the tests alone, never by xrcbench
				return filepath.SkipDir
			}
			return nil
		}
		re := goRead
		switch {
		case strings.HasSuffix(path, "_test.go"):
			return nil
		case strings.HasSuffix(path, ".go"):
		case strings.HasSuffix(path, ".c"):
			re = cRead
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			for _, name := range m[1:] {
				if name != "" {
					seen[name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"TMPDIR", "XRCBENCH_FAKEVERBS_DIR", "XRCBENCH_FAKEVERBS_COST", "XRCBENCH_VERBS_CHILD", "SLURM_JOB_ID"} {
		if !seen[must] {
			t.Fatalf("the scan of the sources found no read of %s: it is broken (found %v)", must, slices.Sorted(maps.Keys(seen)))
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// noPage says whether c is one of the commands writeManPages leaves out.
func noPage(c *cobra.Command) bool {
	return slices.Contains(noManPage, strings.TrimPrefix(c.CommandPath(), "xrcbench "))
}
