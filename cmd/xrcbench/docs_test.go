package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The project documents itself: the design document is in the repository,
// the README and --help point at it, and nothing points a user at a file
// outside the repository (the README once linked ../shared/DESIGN.md).
func TestDocsSelfContained(t *testing.T) {
	top := filepath.Join("..", "..")
	for _, f := range []string{"docs/design.md", "LICENSE", "README.md"} {
		if _, err := os.Stat(filepath.Join(top, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(top, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("docs/design.md")) {
		t.Errorf("README.md does not point at docs/design.md")
	}
	for _, args := range [][]string{{"--help"}, {"conform", "--help"}, {"run", "--help"}} {
		var out, errb bytes.Buffer
		if code := run(&out, &errb, args); code != exitOK || !strings.Contains(out.String(), "docs/design.md") {
			t.Errorf("xrcbench %s: exit %d, help does not point at docs/design.md", strings.Join(args, " "), code)
		}
	}
	// Every text file of the project: none may send a reader outside it.
	err = filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "runs", "build", "bin", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".c", ".h", ".yaml", "":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, bad := range []string{"../shared", "DESIGN.md"} {
			if bytes.Contains(b, []byte(bad)) && !strings.HasSuffix(path, "docs_test.go") {
				t.Errorf("%s mentions %s, which a user of the project does not have", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// What the README and --help tell a user to `go install ...@vX.Y.Z` must be
// a tag the repository has: the README once named @v0.1.0, which it did not
// have, so the command failed as written.
func TestDocsNameOnlyTagsThatExist(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git: the repository's tags are unknown")
	}
	top := filepath.Join("..", "..")
	if err := exec.Command(gitBin, "-C", top, "rev-parse", "--git-dir").Run(); err != nil {
		t.Skipf("not a git checkout (%v): its tags are unknown", err)
	}
	// a version after an @ on a line about installing the command
	tagged := regexp.MustCompile(`@(v[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*)`)
	readme, err := os.ReadFile(filepath.Join(top, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	run(&help, io.Discard, []string{"version", "--help"})
	for where, text := range map[string]string{"README.md": string(readme), "version --help": help.String()} {
		var install []string
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "cmd/xrcbench@") || strings.Contains(line, "go install") {
				install = append(install, line)
			}
		}
		for _, m := range tagged.FindAllStringSubmatch(strings.Join(install, "\n"), -1) {
			out, err := exec.Command(gitBin, "-C", top, "tag", "--list", m[1]).Output()
			if err != nil {
				t.Fatalf("git tag --list %s: %v", m[1], err)
			}
			if strings.TrimSpace(string(out)) != m[1] {
				t.Errorf("%s names go install ...@%s, a tag the repository does not have", where, m[1])
			}
		}
	}
}
