//go:build cgo

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/verbs"
)

// The C constructor's copy of the measuring commands and of the floor is
// main.measuring's and host.MinProcesses.
func TestMeasuringCommandsInC(t *testing.T) {
	var want []string
	for c := range measuring {
		want = append(want, c)
	}
	got := verbs.ProcessLimitCommands()
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the constructor's measuring commands %q, want main.measuring's %q", got, want)
	}
	if verbs.ProcessLimitFloor() != host.MinProcesses {
		t.Errorf("the constructor's floor %d, want host.MinProcesses %d", verbs.ProcessLimitFloor(), host.MinProcesses)
	}
}

// Under a process limit of a few threads (issue 43, item 11) a measuring
// command is refused in one line, exit 1: at 3-5 the Go runtime aborted in
// its own start-up (a dump of 100-280 lines, exit 2), at 8-12 a worker
// could not start. The kernel does not hold root to the limit: as root the
// binary runs as nobody (setpriv), whose count of threads starts at 0.
func TestRunUnderProcessLimit(t *testing.T) {
	bin := inputBinary(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit here")
	}
	var prefix []string
	if os.Getuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("root, and no setpriv to run as another user")
		}
		prefix = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	// A folder the other user can reach (the tests' TMPDIR is private),
	// holding a copy of the binary.
	dir, err := os.MkdirTemp("/tmp", "xrcbench-nproc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "xrcbench")
	copyFile(t, bin, exe)
	for _, n := range []int{3, 5, 8, host.MinProcesses - 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			args := append(append([]string{}, prefix...), prlimit, "--nproc="+strconv.Itoa(n), exe, "run", "--quiet",
				"--duration", "200ms", "--warmup", "0s", "--out", filepath.Join(dir, "run"+strconv.Itoa(n)))
			code, stderr := runWithin(t, time.Minute, args[0], args[1:]...)
			if code != exitFailed || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "xrcbench: the process limit") {
				t.Errorf("--nproc %d: exit %d, want %d and one line naming the process limit; stderr %.400q", n, code, exitFailed, stderr)
			}
		})
	}
}
