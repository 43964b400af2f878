package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// copyFile copies the executable src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Workers run the coordinator's own image, not whatever file is now at
// its path (issue 43, item 5): a run started from a binary that is then
// replaced by another build (make install, a package upgrade) or deleted,
// between repetitions, runs its later repetitions with the original, and
// its result is whole. Before, the replaced binary measured them in a
// result that named the first build, and a deleted one failed them.
func TestWorkersRunTheCoordinatorsImage(t *testing.T) {
	judgesNoTime(t)
	bin := engineBinary(t)
	// Another build: the same source with another version string, so
	// another build id.
	other := filepath.Join(t.TempDir(), "xrcbench-other")
	if out, err := exec.Command("go", "build", "-o", other, "-ldflags",
		"-X github.com/xrcbench/xrcbench/internal/host.buildVersion=another-build", ".").CombinedOutput(); err != nil {
		t.Fatalf("building another xrcbench: %v\n%s", err, out)
	}
	for _, change := range []string{"replaced", "deleted"} {
		t.Run(change, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "xrcbench")
			copyFile(t, bin, exe)
			orig, err := os.Stat(exe)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "run")
			cmd := exec.Command(exe, "run", "--progress", "always", "--workload", "steady", "--procs", "2",
				"--repetitions", "3", "--duration", "3s", "--warmup", "0s", "--out", out)
			stdout, stderr := &syncWriter{}, &syncWriter{}
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			// Once the first repetition measures, its workers have
			// started: the binary changes before the later ones start.
			for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "repetition 1/3  measuring"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the run never measured\n%s", stderr)
				}
			}
			first := map[int]bool{}
			for _, p := range childPIDs(cmd.Process.Pid) {
				first[p] = true
			}
			if change == "replaced" {
				next := exe + ".new"
				copyFile(t, other, next)
				err = os.Rename(next, exe)
			} else {
				err = os.Remove(exe)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Every worker started after the change runs the original
			// image (the inode the run was started from, still alive).
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			later, bad := map[int]bool{}, map[int]bool{}
			var runErr error
		watch:
			for {
				select {
				case runErr = <-done:
					break watch
				case <-time.After(10 * time.Millisecond):
				}
				// Checked at every look, not once: a child seen before
				// its exec still runs the coordinator's image.
				for _, p := range childPIDs(cmd.Process.Pid) {
					if first[p] || bad[p] {
						continue
					}
					exeLink := filepath.Join("/proc", strconv.Itoa(p), "exe")
					st, err := os.Stat(exeLink)
					if err != nil {
						continue // gone
					}
					later[p] = true
					if !os.SameFile(st, orig) {
						l, _ := os.Readlink(exeLink)
						t.Errorf("worker %d runs %s, not the image the run was started from", p, l)
						bad[p] = true
					}
				}
			}
			if runErr != nil {
				t.Fatalf("the run: %v\n%s\n%s", runErr, stdout, stderr)
			}
			if len(later) == 0 {
				t.Error("no worker of a later repetition was seen")
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != results.StatusOK || len(r.Repetitions) != 3 {
				t.Errorf("status %s (%s), %d repetitions: want ok and 3", r.Status, r.Error, len(r.Repetitions))
			}
		})
	}
}
