package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// `go install github.com/xrcbench/xrcbench/cmd/xrcbench@<tag>`, the README's
// path for Go users, run as a user would, with the toolchain that is
// installed (GOTOOLCHAIN=local: go.mod's go line must not ask for a newer
// one) and without the Makefile's ldflags: `version` then names the tag,
// from the module's build information. The module is served, as this
// working tree, at a made-up tag by a proxy in a folder; its dependencies
// come from the module cache's own downloads, so nothing is fetched.
func TestGoInstallVersion(t *testing.T) {
	testenv.Long(t, "builds xrcbench from a module proxy")
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git: the module's files are the working tree's git ls-files")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ls := exec.Command(gitBin, "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list, err := ls.Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the module's files are unknown", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	modcache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod, tag = "github.com/xrcbench/xrcbench", "v0.98.7" // a made-up tag; the module path allows v0 and v1 only
	tmp := t.TempDir()
	at := filepath.Join(tmp, "proxy", mod, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(mod + "@" + tag + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":        []byte(tag + "\n"),
		tag + ".info": []byte(fmt.Sprintf(`{"Version":%q,"Time":"2026-12-01T00:00:00Z"}`, tag)),
		tag + ".mod":  gomod,
		tag + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A module cache of its own: the made-up tag must not land in the
	// user's. Its files are read-only; go clean removes them.
	cache := filepath.Join(tmp, "modcache")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.Join(tmp, "proxy")+",file://"+filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download"),
		"GOMODCACHE="+cache, "GOPRIVATE=", "GONOPROXY=", "GONOSUMDB="+mod, "GOSUMDB=off", "GOFLAGS=", "GOTOOLCHAIN=local",
		"GOBIN="+filepath.Join(tmp, "bin"))
	t.Cleanup(func() {
		clean := exec.Command(goBin, "clean", "-modcache")
		clean.Env, clean.Dir = env, tmp
		if out, err := clean.CombinedOutput(); err != nil {
			t.Errorf("go clean -modcache: %v\n%s", err, out)
		}
	})
	install := exec.Command(goBin, "install", mod+"/cmd/xrcbench@"+tag)
	install.Env, install.Dir = env, tmp
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/xrcbench@%s: %v\n%s", mod, tag, err, out)
	}
	code, stdout, stderr := runProcess(exec.Command(filepath.Join(tmp, "bin", "xrcbench"), "version"))
	if code != 0 || !strings.HasPrefix(stdout, "xrcbench "+tag+"\n") {
		t.Errorf("xrcbench version: exit %d, stdout %q, stderr %q; want it to name %s", code, stdout, stderr, tag)
	}
}
