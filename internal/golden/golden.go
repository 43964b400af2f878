// Package golden holds a test's output to a golden file under the test's
// testdata/golden/ folder, and rewrites the file when the test runs with
// -update. Only tests import it (it registers the -update flag).
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is -update: rewrite the golden files (and whatever else a
// package's tests derive from its code under testdata/) instead of
// comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files and fixtures under testdata/")

// Check compares got with testdata/golden/name, first writing it there
// with -update; a difference shows both and says how to rewrite it.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update in %s writes it)", err, pkgDir())
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update in %s rewrites it):\n--- got\n%s\n--- want\n%s", path, pkgDir(), got, want)
	}
}

// pkgDir is the test's package folder (its working directory) relative
// to the module root, as a go test argument: ./report.
func pkgDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "the package's folder"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return "./" + filepath.ToSlash(rel)
			}
			return wd
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}
