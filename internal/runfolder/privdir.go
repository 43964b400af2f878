package runfolder

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/safedir"
)

// privPrefix starts the name of a run's private directory. The directory
// holds the sim device (tens of MB); a coordinator killed outright cannot
// remove it, so the next run in the same temporary directory removes the
// ones whose coordinator is provably gone: xrcbench-run-<pid>-<random>.
//
// Proof of death is a lock, not a pid: the coordinator holds an flock on
// privLock inside the directory for the run's whole life, and the kernel
// drops it when the process dies, however it dies. A pid says nothing
// about a run in another PID namespace (a container sharing /tmp) or one
// whose pid was reused; a lock held there is seen from here.
const (
	privPrefix = "xrcbench-run-"
	privLock   = safedir.ScratchLock
)

// privLockCreated, when set (by tests), runs between creating a private
// directory's lock file and locking it.
var privLockCreated func(parent string)

// privDir is this run's private directory, locked while it exists.
type privDir struct {
	Path string
	lock *os.File
}

// The sim device, the barrier and the QP table are files every process
// of the run maps shared, so where they live is part of what is measured.
// On a disk file system (ext4, xfs) the kernel tracks the dirty pages of a
// shared mapping: it maps a clean page read-only, and the first write to
// it, in each process's mapping, faults into the file system
// (page_mkwrite), again after every writeback. Measured: half of the
// lifecycle creates at 4 threads on 2 CPUs took such a fault inside the
// timed call, 3-13 µs each (create p50 22.5-24 µs for an injected 20 µs,
// 20.3 µs alone). The sim device prefaults its mapping writable when it
// is opened, which holds until writeback cleans the pages (dirty pages
// expire after 30 s by default); on a memory file system, which has no
// writeback, it holds for good.
//
// privParent chooses the parent of the private directory when the caller
// names none: TMPDIR when set (the user's choice), else /tmp when it is a
// memory file system, else /dev/shm when it is one with room for need
// bytes, else /tmp. onMemory says whether the choice is a memory file
// system.
func privParent(need uint64) (parent string, onMemory bool) {
	tmp := os.TempDir()
	if os.Getenv("TMPDIR") != "" || memoryFS(tmp, 0) {
		return tmp, memoryFS(tmp, 0)
	}
	if memoryFS(shmDir, need) && unix.Access(shmDir, unix.W_OK|unix.X_OK) == nil {
		return shmDir, true
	}
	return tmp, false
}

// shmDir is the system's memory file system for shared memory.
var shmDir = "/dev/shm"

// memoryFS says whether dir is on a memory file system (tmpfs, ramfs)
// with at least need bytes free.
func memoryFS(dir string, need uint64) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	if st.Type != unix.TMPFS_MAGIC && st.Type != unix.RAMFS_MAGIC {
		return false
	}
	return st.Type == unix.RAMFS_MAGIC || st.Bavail*uint64(st.Bsize) >= need
}

// makePrivDir creates this run's private directory in parent ("" is the
// system's temporary directory), after removing those left by dead runs.
// MkdirTemp creates it 0700: the device and domain files are nobody
// else's business.
func makePrivDir(parent string) (*privDir, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeDeadPrivDirs(parent)
	var locked func()
	if privLockCreated != nil {
		locked = func() { privLockCreated(parent) }
	}
	// Several coordinators starting at once (a fleet's nodes sharing
	// /tmp) clean up beside each other: safedir's scratch folder is made
	// so that none can take another's lock first.
	dir, f, err := safedir.MakeScratch(parent, fmt.Sprintf("%s%d-", privPrefix, os.Getpid()), locked)
	if err != nil {
		return nil, fmt.Errorf("private directory in %s: %w", parent, err)
	}
	livePrivDirs.Lock()
	livePrivDirs.paths[dir] = true
	livePrivDirs.Unlock()
	return &privDir{Path: dir, lock: f}, nil
}

// PrivDir is the run's private directory, and whether it is on a
// memory file system (a sim device on disk pays for writeback).
type PrivDir struct {
	*privDir
	Parent   string
	OnMemory bool
}

// OpenPrivDir makes the run's private directory: under tempDir as given,
// else on a memory file system with room for the sim devices, else in
// os.TempDir().
func OpenPrivDir(tempDir string, repetitions int) (*PrivDir, error) {
	parent, onMemory := tempDir, true
	if parent == "" {
		// Room for a default sim device (18 MiB) per repetition, twice.
		parent, onMemory = privParent(uint64(repetitions+1) * 40 << 20)
	}
	priv, err := makePrivDir(parent)
	if err != nil && parent != tempDir && parent != os.TempDir() {
		parent, onMemory = os.TempDir(), false
		priv, err = makePrivDir(parent)
	}
	if err != nil {
		return nil, fmt.Errorf("private directory: %w", err)
	}
	return &PrivDir{privDir: priv, Parent: parent, OnMemory: onMemory}, nil
}

// livePrivDirs are the private directories of this process's runs that
// exist now, wherever privParent put them (TMPDIR, /tmp or /dev/shm).
var livePrivDirs = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// Remove removes the directory, then lets go of its lock.
func (p *privDir) Remove() {
	livePrivDirs.Lock()
	delete(livePrivDirs.paths, p.Path)
	livePrivDirs.Unlock()
	safedir.RemoveScratch(p.Path)
	p.lock.Close()
}

// removeDeadPrivDirs removes the private directories in parent that this
// user owns and whose coordinator is provably gone: their lock can be
// taken (safedir.RemoveDeadScratch).
func removeDeadPrivDirs(parent string) { safedir.RemoveDeadScratch(parent, privPrefix) }

// LiveSimDevices lists the sim device folders of the runs this process is
// coordinating now (one per running repetition), for a soak that samples
// the device's live QPs while the run goes on. It asks the runs where
// their private directories are: a glob of the system's temporary
// directory missed them on /dev/shm (TMPDIR unset, /tmp on a disk), and a
// soak there never sampled the live QPs.
func LiveSimDevices() []string {
	livePrivDirs.Lock()
	defer livePrivDirs.Unlock()
	var out []string
	for dir := range livePrivDirs.paths {
		found, _ := filepath.Glob(filepath.Join(dir, "rep*", "sim"))
		out = append(out, found...)
	}
	sort.Strings(out)
	return out
}
