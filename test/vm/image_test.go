package vm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeTools are stand-ins for what image.sh runs to build a guest, so
// its bookkeeping runs here in a second, without root or a mirror:
// mmdebstrap lays out a root with a kernel (and, when told, first waits
// for a file, so a test can kill the build midway); mkfs.ext4 writes an
// empty image; id says root.
var fakeTools = map[string]string{
	"mmdebstrap": `#!/bin/sh
root=$(eval echo \${$(($# - 1))})
if [ -n "$FAKE_MMDEBSTRAP_WAIT" ]; then
	touch "$FAKE_MMDEBSTRAP_WAIT/started"
	i=0
	while [ ! -e "$FAKE_MMDEBSTRAP_WAIT/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fi
mkdir -p "$root/lib/modules/6.1.0-fake" "$root/boot" "$root/sbin"
echo kernel >"$root/boot/vmlinuz-6.1.0-fake"
echo initrd >"$root/boot/initrd.img-6.1.0-fake"
echo "rdma-core 0-fake" >"$root/xrcbench-packages.txt"
`,
	"mkfs.ext4": `#!/bin/sh
for a; do out=$prev; prev=$a; done
: >"$out"
`,
	"id": "#!/bin/sh\necho 0\n",
}

type imageBuild struct {
	t           *testing.T
	cache, bin  string
	parent      string // the cache's xrcbench/vm folder
	mirrorCount int
}

func newImageBuild(t *testing.T) *imageBuild {
	t.Helper()
	for _, tool := range []string{"bash", "flock", "sha256sum", "mktemp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("image.sh needs %s, not installed here", tool)
		}
	}
	b := &imageBuild{t: t, cache: t.TempDir(), bin: t.TempDir()}
	b.parent = filepath.Join(b.cache, "xrcbench", "vm")
	for name, text := range fakeTools {
		if err := os.WriteFile(filepath.Join(b.bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(b.parent, 0o755); err != nil {
		t.Fatal(err)
	}
	return b
}

// command is image.sh with the fake tools, building a fresh key each
// time (the mirror is part of the key), so no build finds another's image.
func (b *imageBuild) command(extraEnv ...string) *exec.Cmd {
	b.mirrorCount++
	cmd := exec.Command("bash", "./image.sh")
	cmd.Env = append(os.Environ(), "PATH="+b.bin+":"+os.Getenv("PATH"), "XDG_CACHE_HOME="+b.cache,
		"VM_SUITE=bookworm", "VM_MIRROR=http://mirror.invalid/debian"+strings.Repeat("/x", b.mirrorCount), "VM_BUILD_TIMEOUT=60")
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// build runs a whole build and returns its stderr.
func (b *imageBuild) build() string {
	b.t.Helper()
	cmd := b.command()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("image.sh: %v\n%s", err, stderr.String())
	}
	dir := strings.TrimSpace(stdout.String())
	if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil || filepath.Dir(dir) != b.parent {
		b.t.Fatalf("image.sh printed %q, not a finished image under %s: %v\n%s", dir, b.parent, err, stderr.String())
	}
	return stderr.String()
}

// tmpDirs are the build folders left beside the images.
func (b *imageBuild) tmpDirs() []string {
	m, _ := filepath.Glob(filepath.Join(b.parent, "*.tmp.*"))
	return m
}

// TestImageStaleBuildFolders: a build removes the <key>.tmp.* folders of
// builds that were killed, and only those: not one whose builder (or a
// tool it started) still holds its lock, nor one from before the lock
// that is less than a day old.
func TestImageStaleBuildFolders(t *testing.T) {
	b := newImageBuild(t)
	mk := func(name string, lock bool, age time.Duration) string {
		dir := filepath.Join(b.parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "root", "usr"), 0o755); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, ".builder.lock"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(dir, then, then); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := mk("0123456789abcdef.tmp.AAAAAA", true, time.Minute)
	oldUnlocked := mk("0123456789abcdef.tmp.BBBBBB", false, 49*time.Hour)
	youngUnlocked := mk("fedcba9876543210.tmp.CCCCCC", false, time.Hour)
	live := mk("fedcba9876543210.tmp.DDDDDD", true, 49*time.Hour)
	// A builder that runs: this process holds its folder's lock.
	f, err := os.Open(filepath.Join(live, ".builder.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	stderr := b.build()
	tests := []struct {
		dir  string
		kept bool
	}{
		{dead, false}, {oldUnlocked, false}, {youngUnlocked, true}, {live, true},
	}
	for _, tt := range tests {
		_, err := os.Stat(tt.dir)
		if kept := err == nil; kept != tt.kept {
			t.Errorf("%s: kept %v, want %v\n%s", filepath.Base(tt.dir), kept, tt.kept, stderr)
		}
		if said := strings.Contains(stderr, "removing "+tt.dir); said == tt.kept {
			t.Errorf("%s: stderr says it was removed: %v; want %v\n%s", filepath.Base(tt.dir), said, !tt.kept, stderr)
		}
	}
	if left := b.tmpDirs(); len(left) != 2 {
		t.Errorf("build folders left %q, want the two that may still run", left)
	}
}

// TestImageKilledBuild: image.sh killed with SIGKILL in the middle of
// mmdebstrap leaves its folder; the next build keeps it while the
// orphaned mmdebstrap still writes in it, and removes it once that is
// gone. Before, every killed build left its folder for good.
func TestImageKilledBuild(t *testing.T) {
	b := newImageBuild(t)
	sync := t.TempDir()
	killed := b.command("FAKE_MMDEBSTRAP_WAIT=" + sync)
	// A file, not a pipe: the orphans keep the script's stderr open, and
	// Wait would wait for them to close a pipe.
	stderr, err := os.Create(filepath.Join(sync, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	killed.Stderr = stderr
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(filepath.Join(sync, "release"), nil, 0o644) // never leave the fake behind
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(sync, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			killed.Process.Kill()
			killed.Wait()
			out, _ := os.ReadFile(stderr.Name())
			t.Fatalf("the fake mmdebstrap never started\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed.Process.Kill() // the script only: timeout and mmdebstrap run on
	killed.Wait()
	left := b.tmpDirs()
	if len(left) != 1 {
		t.Fatalf("after the kill, build folders %q, want the killed build's one", left)
	}

	b.build()
	if _, err := os.Stat(left[0]); err != nil {
		t.Fatalf("a build removed %s while the killed build's mmdebstrap still ran in it", left[0])
	}

	if err := os.WriteFile(filepath.Join(sync, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The orphan exits within a moment of its release; then its lock is free.
	lock := filepath.Join(left[0], ".builder.lock")
	for deadline := time.Now().Add(30 * time.Second); ; {
		f, err := os.Open(lock)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		f.Close() // and with it any lock taken
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the orphaned fake mmdebstrap did not exit after its release")
		}
		time.Sleep(20 * time.Millisecond)
	}

	stderr2 := b.build()
	if _, err := os.Stat(left[0]); err == nil {
		t.Errorf("%s is still there after the next build\n%s", left[0], stderr2)
	}
	if !strings.Contains(stderr2, "removing "+left[0]+", left by a build that was killed") {
		t.Errorf("the build did not say what it removed:\n%s", stderr2)
	}
	if left := b.tmpDirs(); len(left) != 0 {
		t.Errorf("build folders left %q, want none", left)
	}
}
