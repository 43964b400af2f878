package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Private directories of runs whose coordinator is gone are removed; those
// of a live xrcbench, of a pid that cannot be judged, and anything else in
// the temporary directory stay.
func TestDeadPrivDirsRemoved(t *testing.T) {
	parent := t.TempDir()

	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	other := exec.Command("sleep", "60") // alive, but not xrcbench: a reused pid
	if err := other.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	zombie := exec.Command("true") // exited, not reaped yet
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	for deadline := time.Now().Add(5 * time.Second); !isZombie(zombie.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("child did not become a zombie")
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// This very binary, alive: a worker waiting for its configuration.
	live := exec.Command(exe)
	live.Env = append(os.Environ(), workerEnv+"=1")
	stdin, err := live.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); live.Process.Kill(); live.Wait() })

	dirs := []struct {
		name string
		keep bool
	}{
		{fmt.Sprintf("xrcbench-run-%d-111", exited.Process.Pid), false},
		{fmt.Sprintf("xrcbench-run-%d-222", other.Process.Pid), false},
		{fmt.Sprintf("xrcbench-run-%d-333", zombie.Process.Pid), false},
		{fmt.Sprintf("xrcbench-run-%d-444", live.Process.Pid), true},
		{fmt.Sprintf("xrcbench-run-%d-555", os.Getpid()), true},
		{"xrcbench-run-414393524", true}, // no pid in the name: an older version's
		{"xrcbench-run-abc-1", true},
		{fmt.Sprintf("something-else-%d-1", exited.Process.Pid), true},
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(parent, d.name, "sim"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeDeadPrivDirs(parent)
	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(parent, d.name))
		if kept := err == nil; kept != d.keep {
			t.Errorf("%s: kept %v, want %v", d.name, kept, d.keep)
		}
	}

	priv, err := makePrivDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(priv)
	if pid, ok := privDirPID(filepath.Base(priv)); !ok || pid != os.Getpid() {
		t.Errorf("private directory %s does not carry this pid %d", priv, os.Getpid())
	}
	if fi, err := os.Stat(priv); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private directory %s: %v, mode %v", priv, err, fi.Mode())
	}
	if !strings.HasPrefix(filepath.Base(priv), privPrefix) {
		t.Errorf("private directory %s", priv)
	}
}
