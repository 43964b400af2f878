package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// quickRun makes a small real run folder (null provider) at out.
func quickRun(t *testing.T, out, workload string) *results.Result {
	t.Helper()
	code, stdout, stderr := runEngine(t, "run", "--provider", "null", "--workload", workload, "--qps", "2",
		"--iterations", "20", "--warmup", "0s", "--out", out)
	if code != 0 {
		t.Fatalf("run into %s: exit %d\n%s\n%s", out, code, stdout, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two runs into one folder at once: the second is refused at once (exit 2)
// naming the first one's pid; the first completes, and the folder appears
// only when it is complete.
func TestRunFolderLocked(t *testing.T) {
	judgesNoTime(t)
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	first := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--duration", "3s", "--warmup", "0s", "--out", out)
	first.Stdout, first.Stderr = os.Stderr, os.Stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	lock := filepath.Join(filepath.Dir(out), ".run.lock")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(lock); err == nil && strings.TrimSpace(string(data)) == fmt.Sprint(first.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never named the first run's pid", lock)
		}
	}
	start := time.Now()
	code, stdout, stderr := runEngine(t, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--iterations", "5", "--warmup", "0s", "--out", out)
	if code != exitUsage {
		t.Fatalf("second run: exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
	}
	checkOneLine(t, stderr)
	if want := fmt.Sprintf("pid %d", first.Process.Pid); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not name the holder (%s)", stderr, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the second run took %v to give up: it waited for the first", d)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s exists while its run is still writing it", out)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	code, stdout, stderr = runEngine(t, "report", out)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("beside the run folder: %v, want nothing (lock and temporary folder gone)", ents)
	}
}

// A coordinator SIGKILLed while replacing an earlier run leaves the earlier
// run whole (its result and its own .hlog files, which report accepts); the
// next run into the folder clears what the killed one left.
func TestKilledRunKeepsEarlierRun(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	earlier := quickRun(t, out, "steady")
	killed := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--duration", "60s", "--warmup", "0s", "--out", out)
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for deadline := time.Now().Add(20 * time.Second); len(tmp) == 0; time.Sleep(20 * time.Millisecond) {
		tmp, _ = filepath.Glob(filepath.Join(filepath.Dir(out), ".run.tmp-*", "reg.hlog"))
		if time.Now().After(deadline) {
			killed.Process.Kill()
			t.Fatal("the second run never started writing")
		}
	}
	time.Sleep(1500 * time.Millisecond) // an interval or so into the logs
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()

	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.RunID != earlier.RunID {
		t.Errorf("folder holds run %s, want the earlier %s", r.RunID, earlier.RunID)
	}
	if code, stdout, stderr := runEngine(t, "report", out); code != 0 {
		t.Errorf("report on the earlier run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	next := quickRun(t, out, "steady")
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.tmp-*")); len(left) != 0 || next.RunID == earlier.RunID {
		t.Errorf("after the next run: temporary folders %v, run id %s", left, next.RunID)
	}
}

// report and compare refuse a folder whose .hlog is not the run's own (a
// mix of two runs, counts that disagree, random bytes, a FIFO, a device)
// and a result with nothing measured: exit 2, one line naming the file.
func TestReportRefusesMixedFolder(t *testing.T) {
	dirA := filepath.Join(t.TempDir(), "a")
	dirB := filepath.Join(t.TempDir(), "b")
	quickRun(t, dirA, "steady")
	quickRun(t, dirB, "steady")
	copyDir := func(t *testing.T, src string) string {
		t.Helper()
		dst := t.TempDir()
		ents, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dst
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"another run's hlog", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dirB, "reg.hlog"))
			os.WriteFile(filepath.Join(dir, "reg.hlog"), data, 0o644)
		}, "reg.hlog: not this run's interval log"},
		{"intervals cut off", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, "reg.hlog"))
			lines := strings.SplitAfter(string(data), "\n")
			os.WriteFile(filepath.Join(dir, "reg.hlog"), []byte(strings.Join(lines[:len(lines)-2], "")), 0o644)
		}, "reg.hlog: "},
		{"random bytes", func(t *testing.T, dir string) {
			b := make([]byte, 4096)
			for i := range b {
				b[i] = byte(i*7919 + i/3)
			}
			os.WriteFile(filepath.Join(dir, "reg.hlog"), b, 0o644)
		}, "reg.hlog: not an HdrHistogram interval log"},
		{"a FIFO", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "reg.hlog"))
			if err := syscall.Mkfifo(filepath.Join(dir, "reg.hlog"), 0o644); err != nil {
				t.Skip(err)
			}
		}, "reg.hlog: not a regular file (a FIFO)"},
		{"a link to /dev/zero", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "reg.hlog"))
			os.Symlink("/dev/zero", filepath.Join(dir, "reg.hlog"))
		}, "reg.hlog: not a regular file (a character device)"},
		{"result.json a link to /dev/zero", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, results.FileName))
			os.Symlink("/dev/zero", filepath.Join(dir, results.FileName))
		}, "result.json: not a regular file"},
		{"nothing measured", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, results.FileName))
			s := string(data)
			i := strings.Index(s, `"ops": {`)
			j := strings.Index(s, `"workers"`)
			s = s[:i] + `"ops": {},` + "\n  " + s[j:]
			os.WriteFile(filepath.Join(dir, results.FileName), []byte(s), 0o644)
		}, "no operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, dirA)
			tt.damage(t, dir)
			for _, args := range [][]string{{"report", dir}, {"compare", dirA, dir}} {
				done := make(chan struct{})
				var code int
				var stdout, stderr string
				go func() {
					defer close(done)
					code, stdout, stderr = runCLI(args...)
				}()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatalf("%s: still running after 30s", args[0])
				}
				if code != exitUsage {
					t.Errorf("%s: exit %d, want %d\n%s\n%s", args[0], code, exitUsage, stdout, stderr)
					continue
				}
				checkOneLine(t, stderr)
				if !strings.Contains(stderr, tt.want) {
					t.Errorf("%s: stderr %q, want it to say %q", args[0], stderr, tt.want)
				}
			}
		})
	}
}

// A full output disk: the run says exactly what was not written, exits 1,
// leaves no half-written folder and the earlier run in it as it was.
func TestRunFullDisk(t *testing.T) {
	bin := engineBinary(t)
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		testenv.Skip(t, testenv.Root, "to mount a small tmpfs to fill: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	out := filepath.Join(mnt, "run")
	earlier := quickRun(t, out, "steady")
	// Fill what is left.
	f, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	cmd := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--iterations", "20", "--warmup", "0s", "--out", out)
	code, stdout, stderr := runProcess(cmd)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	if !strings.Contains(stdout, "nothing written to "+out) || strings.Contains(stdout, "run folder: ") {
		t.Errorf("stdout does not say that nothing was written:\n%s", stdout)
	}
	if !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "the earlier run in "+out+" is unchanged") {
		t.Errorf("stderr does not say why and what became of the earlier run:\n%s", stderr)
	}
	r, err := results.Load(out)
	if err != nil || r.RunID != earlier.RunID {
		t.Fatalf("the earlier run: %v, run id %v, want %s", err, r, earlier.RunID)
	}
	if _, err := report.LoadRun(out); err != nil {
		t.Errorf("the earlier run does not read back whole: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(mnt, ".run.*")); len(left) != 0 {
		t.Errorf("left beside the folder: %v", left)
	}
}
