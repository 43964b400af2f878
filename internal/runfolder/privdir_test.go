package runfolder

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Private directories are removed only when this user owns them and their
// lock can be taken: a run alive in another PID namespace (whose pid means
// nothing here: the name carries a pid that is dead in this namespace), a
// directory without a lock, another user's, and anything else stay.
func TestDeadPrivDirsRemoved(t *testing.T) {
	parent := t.TempDir()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	deadPID := exited.Process.Pid

	mk := func(name string, lock bool) string {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "sim"), 0o700); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, privLock), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mk(fmt.Sprintf("xrcbench-run-%d-dead", deadPID), true)
	live := mk(fmt.Sprintf("xrcbench-run-%d-live", deadPID), true)
	noLock := mk(fmt.Sprintf("xrcbench-run-%d-nolock", deadPID), false)
	linked := mk(fmt.Sprintf("xrcbench-run-%d-linked", deadPID), false)
	if err := os.Symlink(filepath.Join(dead, privLock), filepath.Join(linked, privLock)); err != nil {
		t.Fatal(err)
	}
	other := mk("something-else-1-1", true)

	// The live run: a process holding the lock, in a PID namespace of its
	// own when unshare(1) can make one (as a container would), else here.
	holder := exec.Command("unshare", "--pid", "--fork", "--kill-child", "flock", filepath.Join(live, privLock), "sleep", "60")
	where := "in another PID namespace"
	if out, err := exec.Command("unshare", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		t.Logf("unshare --pid does not work here (%v: %s): the holder runs in this namespace", err, strings.TrimSpace(string(out)))
		holder = exec.Command("flock", filepath.Join(live, privLock), "sleep", "60")
		where = "in this namespace"
	}
	holder.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Skipf("no flock(1)/unshare(1): %v", err)
	}
	t.Cleanup(func() { unix.Kill(-holder.Process.Pid, unix.SIGKILL); holder.Wait() })
	waitLocked(t, filepath.Join(live, privLock))

	var foreign string
	if os.Getuid() == 0 {
		// Another user's directory, its coordinator dead: not ours to judge.
		foreign = mk(fmt.Sprintf("xrcbench-run-%d-foreign", deadPID), true)
		for _, p := range []string{foreign, filepath.Join(foreign, privLock), filepath.Join(foreign, "sim")} {
			if err := os.Lchown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}

	removeDeadPrivDirs(parent)
	check := func(dir string, keep bool, why string) {
		t.Helper()
		_, err := os.Stat(dir)
		if kept := err == nil; kept != keep {
			t.Errorf("%s (%s): kept %v, want %v", filepath.Base(dir), why, kept, keep)
		}
	}
	check(dead, false, "lock free: its coordinator is gone")
	check(live, true, "lock held by a live run "+where)
	check(noLock, true, "no lock file")
	check(linked, true, "lock file is a symbolic link")
	check(other, true, "not a private directory")
	if foreign != "" {
		check(foreign, true, "owned by another user")
	}

	priv, err := makePrivDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(priv.Path), fmt.Sprintf("%s%d-", privPrefix, os.Getpid())) {
		t.Errorf("private directory %s does not carry this pid %d", priv.Path, os.Getpid())
	}
	if fi, err := os.Stat(priv.Path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private directory %s: %v, mode %v", priv.Path, err, fi.Mode())
	}
	// This run's own directory is locked: another run leaves it alone.
	removeDeadPrivDirs(parent)
	check(priv.Path, true, "this live run's")
	priv.Remove()
	check(priv.Path, false, "removed at the end of its run")
}

// waitLocked waits until another process holds the flock on path.
func waitLocked(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		f.Close()
		if err == unix.EWOULDBLOCK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no process took the lock: %v", path, err)
		}
	}
}

// A run cleaning up while another is creating its directory (coordinators
// starting at once, as a fleet's nodes sharing /tmp do) never removes it:
// the cleanup runs in the instant between the lock file's creation and
// its locking. It once found the lock file there unlocked, took it and
// removed the new run's directory, which then failed making its device.
func TestPrivDirCreatedAmidCleanup(t *testing.T) {
	parent := t.TempDir()
	privLockCreated = removeDeadPrivDirs
	defer func() { privLockCreated = nil }()
	p, err := makePrivDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Remove()
	if _, err := os.Stat(filepath.Join(p.Path, privLock)); err != nil {
		t.Fatalf("the new run's directory lost its lock: %v", err)
	}
	// And it is locked: a cleanup now leaves it alone.
	removeDeadPrivDirs(parent)
	if _, err := os.Stat(p.Path); err != nil {
		t.Fatalf("a live run's directory was removed: %v", err)
	}
}

// The private directory, which holds the files every process maps shared,
// goes on a memory file system when there is one with room: TMPDIR when it
// is one, else /dev/shm, else TMPDIR on disk (and the run warns).
func TestPrivParentOnMemory(t *testing.T) {
	if !memoryFS("/dev/shm", 0) {
		t.Skip("/dev/shm is not a memory file system here")
	}
	disk := t.TempDir()
	if memoryFS(disk, 0) {
		t.Skipf("the temporary directory %s is itself a memory file system: no disk directory to test with", disk)
	}
	mem, err := os.MkdirTemp("/dev/shm", "xrcbench-test-")
	if err != nil {
		t.Skipf("cannot write to /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(mem) })
	saved := shmDir
	t.Cleanup(func() { shmDir = saved })
	for _, c := range []struct {
		name, tmpdir, shm string
		need              uint64
		want              string
		onMemory          bool
	}{
		{"TMPDIR on memory", mem, disk, 0, mem, true},
		{"TMPDIR on disk: the user's choice", disk, mem, 0, disk, false},
		{"no TMPDIR, /dev/shm with room", "", mem, 1 << 20, mem, true},
		{"no TMPDIR, /dev/shm full", "", mem, 1 << 62, "/tmp", false},
		{"no TMPDIR, no memory file system", "", disk, 0, "/tmp", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.tmpdir == "" && memoryFS("/tmp", 0) {
				t.Skip("/tmp is a memory file system here: it is chosen first")
			}
			t.Setenv("TMPDIR", c.tmpdir)
			shmDir = c.shm
			got, onMemory := privParent(c.need)
			if got != c.want || onMemory != c.onMemory {
				t.Errorf("privParent = %s, %v; want %s, %v", got, onMemory, c.want, c.onMemory)
			}
		})
	}
}

// LiveSimDevices finds a running run's sim device wherever its private
// directory is: privParent puts it on /dev/shm when TMPDIR is unset and
// /tmp is a disk, where a glob of the temporary directory did not look,
// so qualify's soak sampled no live QPs at all (0 samples, every time).
func TestLiveSimDevicesAnywhere(t *testing.T) {
	parents := []string{t.TempDir(), os.TempDir()}
	var privs []*privDir
	var want []string
	for _, parent := range parents {
		p, err := makePrivDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		privs = append(privs, p)
		sim := filepath.Join(p.Path, "rep0", "sim")
		if err := os.MkdirAll(sim, 0o700); err != nil {
			t.Fatal(err)
		}
		want = append(want, sim)
	}
	has := func(dirs []string, d string) bool {
		for _, x := range dirs {
			if x == d {
				return true
			}
		}
		return false
	}
	got := LiveSimDevices()
	for _, w := range want {
		if !has(got, w) {
			t.Errorf("LiveSimDevices() = %v, lacks %s", got, w)
		}
	}
	for _, p := range privs {
		p.Remove()
	}
	for _, w := range want {
		if has(LiveSimDevices(), w) {
			t.Errorf("%s listed after its run removed it", w)
		}
	}
}
