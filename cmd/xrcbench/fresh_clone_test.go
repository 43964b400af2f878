package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// TestFreshCloneWithoutRDMACore is a newcomer's first minutes on a machine
// without rdma-core: in a clean clone of this commit, with the rdma-core
// headers hidden (a private mount namespace with an empty folder over
// /usr/include/infiniband), `make build` must give the full binary, rdma
// provider included, and with every libibverbs.so.1 the dynamic loader
// would find hidden too (/dev/null bind-mounted over each), the binary must
// start: `make run` runs a benchmark on sim and writes its report, `list`
// and `devices` say which library is missing and which package brings it,
// and `run --provider rdma` exits 1 saying the same in one line.
// The Makefile's header check once always said yes, and the build then
// failed on rdma.c; a binary linked against libibverbs once died in the
// dynamic loader (exit 127) before --help.
func TestFreshCloneWithoutRDMACore(t *testing.T) {
	testenv.Long(t, "clones the repository, builds it and runs make run")
	if os.Geteuid() != 0 {
		testenv.Skip(t, testenv.Root, "hiding rdma-core's headers and library (unshare -m, mount --bind)")
	}
	for _, tool := range []string{"git", "make", "unshare", "mount", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skip(t, testenv.Tool, "%s is not installed: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		testenv.Skip(t, testenv.Kernel, "unshare -m is not permitted here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	libs := libibverbsCopies(t)
	t.Logf("hiding %d libibverbs.so.1: %s", len(libs), strings.Join(libs, " "))
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
	// headers or the library are not installed at all there is nothing
	// to hide. The hiding of the library is checked by the loader itself
	// (ldd would run the binary's loader too, and names no dlopen).
	const script = `set -e
empty=$1 clone=$2; shift 2
if [ -d /usr/include/infiniband ]; then mount --bind "$empty" /usr/include/infiniband; fi
if [ -e /usr/include/infiniband/verbs.h ]; then echo "step: headers still visible"; exit 1; fi
cd "$clone"
echo "step: tags [$(make -s tags)]"
echo "step: make build"
make build
for lib in "$@"; do mount --bind /dev/null "$lib"; done
unset LD_LIBRARY_PATH
echo "step: make run"
make run RUN_ARGS='--duration 1s --warmup 0s'
echo "step: list"
./bin/xrcbench list
echo "step: version"
./bin/xrcbench version
echo "step: devices"
rc=0; ./bin/xrcbench devices 2>devices.err || rc=$?
echo "devices exit $rc"; cat devices.err
echo "step: rdma"
rc=0; ./bin/xrcbench run --provider rdma --duration 100ms --warmup 0s --repetitions 1 --out runs/rdma 2>rdma.err || rc=$?
echo "rdma exit $rc"; cat rdma.err
echo "step: done"
`
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh", empty, clone}, libs...)...)
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
		t.Errorf("make selects build tags:\n%s", all)
	}
	if strings.Contains(all, "infiniband/verbs.h") || strings.Contains(all, `-tags "rdma"`) {
		t.Errorf("the build looked for the rdma-core headers:\n%s", all)
	}
	if want := "revision: " + strings.TrimSpace(string(rev)); !strings.Contains(stdout, want) {
		t.Errorf("xrcbench version does not name the revision built (%q):\n%s", want, stdout)
	}
	if !strings.Contains(stdout, "rdma provider: built") {
		t.Errorf("xrcbench version does not say the rdma provider is built:\n%s", stdout)
	}
	// What a user without the library reads, in list, devices and run.
	missing := func(where, text string) {
		t.Helper()
		for _, want := range []string{"libibverbs.so.1 cannot be loaded", "libibverbs1 (Debian, Ubuntu)", "rdma-core"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q:\n%s", where, want, text)
			}
		}
	}
	section := func(from, to string) string {
		_, after, _ := strings.Cut(stdout, "step: "+from+"\n")
		before, _, _ := strings.Cut(after, "step: "+to+"\n")
		return before
	}
	list := section("list", "version")
	for _, p := range []string{"rdma", "legacy"} {
		if !regexp.MustCompile(`(?m)^  ` + p + ` +unavailable`).MatchString(list) {
			t.Errorf("list does not say the %s provider is unavailable:\n%s", p, list)
		}
	}
	missing("list", list)
	devices := section("devices", "rdma")
	if !strings.Contains(devices, "devices exit 1\n") {
		t.Errorf("devices without libibverbs: want exit 1:\n%s", devices)
	}
	missing("devices", devices)
	rdma := section("rdma", "done")
	if !strings.Contains(rdma, "rdma exit 1\n") {
		t.Errorf("run --provider rdma without libibverbs: want exit 1:\n%s", rdma)
	}
	if _, msg, _ := strings.Cut(rdma, "rdma exit 1\n"); strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("run --provider rdma without libibverbs: want one line on stderr, got:\n%s", msg)
	}
	missing("run --provider rdma", rdma)
	for _, f := range []string{"result.json", "report.html", "summary.md", "bench.txt"} {
		if _, err := os.Stat(filepath.Join(clone, "runs", "make-run", f)); err != nil {
			t.Errorf("make run did not write %s: %v", f, err)
		}
	}
}

// libibverbsCopies is every libibverbs.so.1 the dynamic loader could find
// here: those its cache (ldconfig -p) names and any in the default and
// multiarch library folders, each resolved to the file itself, since a
// bind mount over a symlink would replace the link's target anyway.
func libibverbsCopies(t *testing.T) []string {
	t.Helper()
	var cands []string
	if out, err := exec.Command("ldconfig", "-p").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "libibverbs.so.1" {
				cands = append(cands, f[len(f)-1])
			}
		}
	}
	for _, pat := range []string{"/lib*/libibverbs.so.1", "/usr/lib*/libibverbs.so.1", "/usr/local/lib*/libibverbs.so.1",
		"/lib/*/libibverbs.so.1", "/usr/lib/*/libibverbs.so.1", "/usr/local/lib/*/libibverbs.so.1"} {
		m, _ := filepath.Glob(pat)
		cands = append(cands, m...)
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	return out
}
