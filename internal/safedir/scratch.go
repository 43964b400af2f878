package safedir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A scratch folder is a private folder in a temporary directory whose
// owner holds an flock on its file "lock" for the folder's whole life:
// the kernel drops the lock when the process dies, however it dies, so a
// later process can tell a dead owner's folder from a live one (a pid
// says nothing across PID namespaces sharing /tmp, or once reused). The
// run's private directory (bench) and calibrate's folder (verbs) are such
// folders. ScratchLock is the lock file's name.
const ScratchLock = "lock"

// MakeScratch creates a folder named prefix* in parent, mode 0700, and
// locks it; locked is called (when not nil) between creating the lock
// file and taking the lock, for tests. The lock file is locked under
// another name and renamed into place, so a cleaner at this instant finds
// no lock file or a held one, never one it could take first. The
// returned file holds the lock: close it after removing the folder.
func MakeScratch(parent, prefix string, locked func()) (dir string, lock *os.File, err error) {
	if dir, err = os.MkdirTemp(parent, prefix); err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ScratchLock+".new"), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err == nil {
		if locked != nil {
			locked()
		}
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			err = os.Rename(filepath.Join(dir, ScratchLock+".new"), filepath.Join(dir, ScratchLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// RemoveDeadScratch removes the scratch folders named prefix* in parent
// whose owner is provably gone: this user's folders (not links) whose
// lock file, a regular file of this user's, can be locked. Anything else
// stays: another user's folder, a live one's (wherever its owner runs),
// one without a lock file (an older version's, or one being made this
// instant). Best effort: errors leave a folder be.
func RemoveDeadScratch(parent, prefix string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	uid := uint32(os.Getuid())
	ours := func(st os.FileInfo) bool {
		sys, ok := st.Sys().(*syscall.Stat_t)
		return ok && sys.Uid == uid
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() || !ours(st) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, ScratchLock), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && ours(st) && unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			// Held while removing: no one can adopt it meanwhile.
			os.RemoveAll(dir)
		}
		f.Close()
	}
}

// RemoveScratch removes a scratch folder that may still be filling: a
// stop signal removes it while the work in it goes on. Removing in place
// loses to a file made between emptying the folder and removing it, so
// the folder is first renamed out of the way, after which nothing made by
// its path lands in it; what is made through a descriptor opened before
// the rename is taken by trying again. The new name keeps the prefix and
// the lock file: a folder left anyway is a dead scratch folder to the
// next RemoveDeadScratch. The caller closes its lock after.
func RemoveScratch(dir string) error {
	if gone := dir + ".removed"; os.Rename(dir, gone) == nil {
		dir = gone
	}
	var err error
	for try := 0; try < 50; try++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return err
}
