package safedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockName is the lock file beside the folder name: .<name>.lock.
func LockName(name string) string { return "." + name + ".lock" }

// OpenUnchecked opens the folder at path, following it as given, and
// checks nothing: for a caller that only locks beside a folder of the
// user's choosing.
func OpenUnchecked(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{os.NewFile(uintptr(fd), path), path}, nil
}

// Lock takes an exclusive flock(2) on the file name in d, made if need
// be, without waiting (unix.EWOULDBLOCK when another holds it), and
// writes this process's pid into it. The file is reached beneath d's
// handle, never through a link, and must be a regular file of the
// current user's with no other name: a file another user planted there,
// or a hard link to one of root's, is refused rather than truncated. A
// pid that cannot be written (a full disk) is pidErr beside the lock,
// which holds all the same.
//
// Unlock removes the file while still holding it: a process that opened
// it meanwhile finds, once it holds the lock, that the name no longer
// names its file, and starts over.
func (d *Dir) Lock(name string) (l *FileLock, pidErr, err error) {
	path := filepath.Join(d.path, name)
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat(d.Fd(), name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		f := os.NewFile(uintptr(fd), path)
		var held unix.Stat_t
		if err := unix.Fstat(fd, &held); err != nil {
			f.Close()
			return nil, nil, err
		}
		if held.Mode&unix.S_IFMT != unix.S_IFREG || int(held.Uid) != os.Geteuid() || held.Nlink > 1 {
			f.Close()
			return nil, nil, &RefusedError{path, fmt.Sprintf("not a lock of this user's (a file of user %d's, mode %o, %d names): remove it", held.Uid, held.Mode, held.Nlink)}
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, nil, err
		}
		// The holder before us may have removed the file between our open
		// and our lock: then we hold a lock on nothing anyone else sees.
		var now unix.Stat_t
		if unix.Fstatat(d.Fd(), name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == held.Dev && now.Ino == held.Ino {
			err := f.Truncate(0)
			if err == nil {
				_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			if err != nil {
				pidErr = fmt.Errorf("the lock %s holds, but this process's pid could not be written into it (%w): a second run into the folder is refused naming no holder", path, err)
			}
			return &FileLock{f: f, dir: d, name: name, dev: held.Dev, ino: held.Ino}, pidErr, nil
		}
		f.Close()
		if attempt > 10 {
			return nil, nil, fmt.Errorf("%s keeps being replaced", path)
		}
	}
}

// FileLock is a lock Lock took.
type FileLock struct {
	f        *os.File
	dir      *Dir
	name     string
	dev, ino uint64
}

// Unlock removes the lock file, if it is still ours, and lets go of the
// lock. The folder's handle it was taken in must still be open.
func (l *FileLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstatat(l.dir.Fd(), l.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Dev == l.dev && st.Ino == l.ino {
		unix.Unlinkat(l.dir.Fd(), l.name, 0)
	}
	l.f.Close()
	l.f = nil
}

// Holder is the pid written in the lock file name in d, or "unknown".
func (d *Dir) Holder(name string) string {
	fd, err := unix.Openat(d.Fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "unknown"
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "unknown"
	}
	buf := make([]byte, 64)
	n, _ := unix.Read(fd, buf)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:max(n, 0)]))); err == nil && pid > 0 {
		return strconv.Itoa(pid)
	}
	return "unknown"
}

// IsBusy says whether err is Lock's answer for a lock another holds.
func IsBusy(err error) bool { return errors.Is(err, unix.EWOULDBLOCK) }

// BusyError is a folder whose lock another process holds.
type BusyError struct {
	Path   string // the folder
	Holder string // the holder's pid, or "unknown"
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: another xrcbench is writing it (pid %s)", e.Path, e.Holder)
}

// OpenLocked is OpenOut(path, true) holding, until unlock, the lock a run
// holds beside its folder while it writes and puts it in place
// (.<name>.lock, exclusive): a command writing into a run folder then
// never writes into one a run is about to swap out, and a run never
// starts replacing the folder meanwhile. A lock another holds is a
// *BusyError at once. Where the lock cannot be made for want of
// permission (a parent the user cannot write), no run can make it or its
// temporary sibling there either, and the folder is opened unlocked.
func OpenLocked(path string) (d *Dir, unlock func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	if abs == "/" {
		d, err := Open(abs)
		return d, func() {}, err
	}
	parent, name := filepath.Dir(abs), filepath.Base(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil, err
	}
	pd, err := OpenParent(parent)
	if err != nil {
		return nil, nil, err
	}
	l, _, err := pd.Lock(LockName(name))
	switch {
	case IsBusy(err):
		holder := pd.Holder(LockName(name))
		pd.Close()
		return nil, nil, &BusyError{path, holder}
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS):
		l = nil
	case err != nil:
		pd.Close()
		return nil, nil, err
	}
	if d, err = pd.OpenOut(name, true); err != nil {
		l.Unlock()
		pd.Close()
		return nil, nil, err
	}
	return d, func() { l.Unlock(); pd.Close() }, nil
}
