package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tree is every entry under root: its kind, and a file's content
// ("folder", "file <content>", "link to <target>"), by path relative to
// root; a link is not followed. Tests of what a run does to a folder
// compare a tree before and after.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(path)
			got[rel] = "link to " + to
		case d.IsDir():
			got[rel] = "folder"
		default:
			data, _ := os.ReadFile(path)
			got[rel] = "file " + string(data)
		}
		return nil
	})
	return got
}

// WriteTree lays out files under root (relative path → content); a
// content "link to <target>" makes a symbolic link instead.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if to, ok := strings.CutPrefix(content, "link to "); ok {
			if err := os.Symlink(to, path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
