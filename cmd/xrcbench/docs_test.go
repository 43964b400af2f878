package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
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
