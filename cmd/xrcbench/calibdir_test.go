package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// calibDirs lists the calibrate scratch folders in dir.
func calibDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "xrcbench-calibrate-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startCalibrate starts calibrate with TMPDIR tmp and waits until its
// scratch folder, the one not in before, holds its lock.
func startCalibrate(t *testing.T, tmp string, before []string) (*exec.Cmd, *syncWriter, string) {
	t.Helper()
	cmd := exec.Command(engineBinary(t), "calibrate")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr := &syncWriter{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, d := range calibDirs(t, tmp) {
			if !strings.Contains(strings.Join(before, "\n"), d) {
				if _, err := os.Stat(filepath.Join(d, "lock")); err == nil {
					return cmd, stderr, d
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("calibrate made no folder in %s\n%s", tmp, stderr)
		}
	}
}

// calibrate's scratch folder (35-52 MB of sim devices) is not left behind
// (issue 43, item 11): a stop signal removes it and ends calibrate in one
// line, exit 1; one killed outright leaves it, and the next calibrate
// removes it, as it does any whose calibration is gone, but not one whose
// calibration still runs (its lock held) nor one without a lock.
func TestCalibrateLeavesNoFolder(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			tmp := t.TempDir()
			cmd, stderr, dir := startCalibrate(t, tmp, nil)
			cmd.Process.Signal(sig)
			code, _ := waitExit(t, cmd, 30*time.Second)
			if code != exitFailed || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "stopped, its folder removed") {
				t.Errorf("exit %d, stderr %q: want %d and one line", code, stderr, exitFailed)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s is left behind (%v)", dir, err)
			}
			if left := calibDirs(t, tmp); len(left) > 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
	t.Run("SIGKILL, then the next calibrate", func(t *testing.T) {
		tmp := t.TempDir()
		cmd, _, dead := startCalibrate(t, tmp, nil)
		cmd.Process.Kill()
		cmd.Wait()
		// Another calibration still running: its lock held (here, by
		// this process).
		live := filepath.Join(tmp, "xrcbench-calibrate-live")
		os.Mkdir(live, 0o700)
		f, err := os.Create(filepath.Join(live, "lock"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		// One without a lock file: being made, or an older version's.
		lockless := filepath.Join(tmp, "xrcbench-calibrate-nolock")
		os.Mkdir(lockless, 0o700)
		if _, err := os.Stat(dead); err != nil {
			t.Fatalf("the killed calibrate's folder: %v", err)
		}
		next, _, mine := startCalibrate(t, tmp, []string{dead, live, lockless})
		if _, err := os.Stat(dead); !os.IsNotExist(err) {
			t.Errorf("the killed calibrate's %s is still there (%v)", dead, err)
		}
		for _, d := range []string{live, lockless, mine} {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("%s was removed: %v", d, err)
			}
		}
		next.Process.Signal(syscall.SIGINT)
		waitExit(t, next, 30*time.Second)
	})
}
