package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// TestFreshCloneWithoutHeaders is a newcomer's first minutes on a machine
// without libibverbs-dev: in a clean clone of this commit, with the rdma-core
// headers hidden (a private mount namespace with an empty folder over
// /usr/include/infiniband), `make build` must leave the rdma provider out
// and `make run` must run a benchmark and write its report. The Makefile's
// header check once always said yes, and the build then failed on rdma.c.
func TestFreshCloneWithoutHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: clones the repository, builds it and runs a benchmark")
	}
	if os.Geteuid() != 0 {
		t.Skip("hiding the rdma-core headers needs root (unshare -m, mount --bind)")
	}
	for _, tool := range []string{"git", "make", "unshare", "mount", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare -m is not permitted here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	clone, empty := filepath.Join(tmp, "xrcbench"), filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"clone", "-q", strings.TrimSpace(string(top)), clone},
		{"-C", clone, "checkout", "-q", "--detach", strings.TrimSpace(string(rev))},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// Each step prints a marker, so a failure names the step. Where the
	// headers are not installed at all there is nothing to hide.
	const script = `set -e
if [ -d /usr/include/infiniband ]; then mount --bind "$1" /usr/include/infiniband; fi
if [ -e /usr/include/infiniband/verbs.h ]; then echo "step: headers still visible"; exit 1; fi
cd "$2"
echo "step: tags [$(make -s tags)]"
echo "step: make build"
make build
echo "step: make run"
make run RUN_ARGS='--duration 1s --warmup 0s'
echo "step: list"
./bin/xrcbench list
echo "step: version"
./bin/xrcbench version
echo "step: done"
`
	cmd := exec.Command("unshare", "-m", "sh", "-c", script, "sh", empty, clone)
	// A distinct cgo flag makes the go command compile every cgo package
	// (verbs among them) again here, with the headers hidden, rather than
	// take an object the build cache holds from a build that had them.
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -g -DXRCBENCH_FRESH_CLONE_TEST")
	code, stdout, stderr := runProcess(cmd)
	all := stdout + stderr
	if code != 0 || !strings.Contains(stdout, "step: done") {
		t.Fatalf("exit %d\n%s", code, all)
	}
	if !strings.Contains(stdout, "step: tags []") {
		t.Errorf("without the headers make still selects build tags:\n%s", all)
	}
	if strings.Contains(all, "infiniband/verbs.h") || strings.Contains(all, `-tags "rdma"`) {
		t.Errorf("the build looked for the rdma-core headers:\n%s", all)
	}
	if !strings.Contains(stdout, verbs.RDMANotBuilt) {
		t.Errorf("xrcbench list does not say the rdma provider is %q:\n%s", verbs.RDMANotBuilt, stdout)
	}
	if want := "revision: " + strings.TrimSpace(string(rev)); !strings.Contains(stdout, want) {
		t.Errorf("xrcbench version does not name the revision built (%q):\n%s", want, stdout)
	}
	if !strings.Contains(stdout, "rdma provider: "+verbs.RDMANotBuilt) {
		t.Errorf("xrcbench version does not say the rdma provider is not built:\n%s", stdout)
	}
	for _, f := range []string{"result.json", "report.html", "summary.md", "bench.txt"} {
		if _, err := os.Stat(filepath.Join(clone, "runs", "make-run", f)); err != nil {
			t.Errorf("make run did not write %s: %v", f, err)
		}
	}
}
