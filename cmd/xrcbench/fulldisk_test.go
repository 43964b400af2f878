package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// TestRunFullTmpdir: a TMPDIR too small for the sim device. Before, the
// device file was sized with ftruncate and mapped sparse, so the first
// touch of an unbacked page killed the coordinator with SIGBUS (a 177-line
// dump, exit 2) and left its private folder and empty .hlog files behind.
// Now: one line naming the device and ENOSPC, exit 1, a failed result, and
// nothing left in TMPDIR nor header-only .hlog files in the run folder.
// The small TMPDIR is a tmpfs mounted in a private mount namespace.
func TestRunFullTmpdir(t *testing.T) {
	bin := engineBinary(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		testenv.Skip(t, testenv.Tool, "unshare(1) is not installed: cannot mount a small tmpfs privately")
	}
	if out, err := exec.Command(unshare, "-m", "true").CombinedOutput(); err != nil {
		testenv.Skip(t, testenv.Root, "unshare -m is not permitted here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	small, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	listing := filepath.Join(t.TempDir(), "left")
	// 2 MiB: far less than the 18 MiB of a default device. What the run
	// leaves in TMPDIR is listed inside the namespace, where the tmpfs is.
	script := `small="$1" listing="$2"; shift 2
mount -t tmpfs -o size=2m xrcbench-full "$small" || exit 97
TMPDIR="$small" "$@"; rc=$?
ls -A "$small" > "$listing"; exit $rc`
	cmd := exec.Command(unshare, "-m", "sh", "-c", script, "sh", small, listing, bin, "run", "--provider", "sim",
		"--workload", "lifecycle", "--procs", "1", "--threads", "1", "--iterations", "10", "--warmup", "0s", "--out", out)
	code, stdout, stderr := runProcess(cmd)
	if code == 97 {
		t.Skipf("mounting a tmpfs was refused: %s", stderr)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "no space left") || !strings.Contains(errLines[0], "sim.dev") {
		t.Fatalf("stderr: want one error line naming sim.dev and no space left, got:\n%s", stderr)
	}
	left, err := os.ReadFile(listing)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(left)); s != "" {
		t.Errorf("left in the full TMPDIR: %s", s)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".hlog") {
			t.Errorf("%s left in the run folder though nothing was measured", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err != nil {
		t.Errorf("a failed run still writes its result: %v", err)
	}
}
