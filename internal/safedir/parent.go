package safedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CheckParent refuses, for a process running as root, a folder in which
// another user can rename or replace root's entries: one owned by another
// user, or one that group or other can write without the sticky bit. Such
// a user could swap a folder root writes into for a link to any folder
// between root's checks and its writes, or put a link where root's
// finished folder goes. With the sticky bit (/tmp) only an entry's owner
// may rename or remove it. Group-writable is refused whatever the group
// holds: finding out who is in it is more than a check should promise.
// Any other user may write into any folder they choose; what they can
// redirect is only their own files.
func CheckParent(path string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &RefusedError{path, "not a folder"}
	}
	if os.Geteuid() != 0 {
		return nil
	}
	if st.Uid != 0 {
		return &RefusedError{path, fmt.Sprintf("owned by user %d, who could swap what root writes there for a link elsewhere; a run as root writes only into a folder of root's", st.Uid)}
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return &RefusedError{path, fmt.Sprintf("other users can write it (mode %04o, no sticky bit) and so swap what root writes there for a link elsewhere; a run as root writes only where they cannot (chmod o-w,g-w or +t)", st.Mode&0o7777)}
	}
	return nil
}

// OpenParent opens the folder at path to hold the entries written beneath
// it, following path as the user gave it, and refuses it for root when
// another user could swap those entries (CheckParent).
func OpenParent(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return nil, &RefusedError{path, "not a folder"}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := CheckParent(path, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Dir{os.NewFile(uintptr(fd), path), path}, nil
}

// OpenOut opens the folder at path that a command writes its files into
// (made, with its parents, when create is set), so that nobody else can
// steer those writes: its parent is opened as OpenParent opens it (for
// root, refused when another user can swap entries there), the folder
// itself beneath the parent's handle without following a link another
// user made, and it is checked as Open checks it. Every file is then
// written beneath the returned handle, which keeps naming this folder
// whatever happens to its path meanwhile.
func OpenOut(path string, create bool) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if abs == "/" {
		return Open(abs)
	}
	parent, name := filepath.Dir(abs), filepath.Base(abs)
	if create {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, err
		}
	}
	pd, err := OpenParent(parent)
	if err != nil {
		return nil, err
	}
	defer pd.Close()
	return pd.OpenOut(name, create)
}

// OpenOut is OpenOut of the folder name (one component) in d, a folder
// opened by OpenParent: for a caller that also locks beside it.
func (pd *Dir) OpenOut(name string, create bool) (*Dir, error) {
	path := filepath.Join(pd.path, name)
	if !local(name) || filepath.Base(name) != name || name == "." {
		return nil, fmt.Errorf("%s: %q is not a name inside it", pd.path, name)
	}
	if create {
		if err := unix.Mkdirat(pd.Fd(), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
	}
	fd, err := unix.Openat(pd.Fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		// A link of the user's own is the user's choice; one another
		// user made is refused (in a folder root may write into, only
		// a sticky one lets another user make it).
		var st unix.Stat_t
		if unix.Fstatat(pd.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if int(st.Uid) != os.Geteuid() {
				return nil, &RefusedError{path, fmt.Sprintf("a symbolic link of user %d's: nothing is written through it", st.Uid)}
			}
			fd, err = unix.Openat(pd.Fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		}
	}
	if errors.Is(err, unix.ENOTDIR) {
		return nil, &RefusedError{path, "not a folder"}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return checked(fd, path)
}

// Create makes the file name (one component) in the folder, new: O_EXCL
// refuses anything already there, a link included, which would otherwise
// be followed. Its mode is perm whatever the umask, as every file a run
// writes.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	path := filepath.Join(d.path, name)
	if !local(name) || filepath.Base(name) != name {
		return nil, fmt.Errorf("%s: %q is not a name inside it", d.path, name)
	}
	fd, err := unix.Openat(d.Fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if err := f.Chmod(perm); err != nil {
		f.Close()
		unix.Unlinkat(d.Fd(), name, 0)
		return nil, err
	}
	return f, nil
}

// Mkdir makes the folder name (one component) in d, new, and opens it
// without following a link: whatever is at name afterwards, the handle is
// of the folder made here.
func (d *Dir) Mkdir(name string, perm uint32) (*Dir, error) {
	path := filepath.Join(d.path, name)
	if !local(name) || filepath.Base(name) != name || name == "." {
		return nil, fmt.Errorf("%s: %q is not a name inside it", d.path, name)
	}
	if err := unix.Mkdirat(d.Fd(), name, perm); err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
	}
	fd, err := openNoFollow(d.Fd(), name, path)
	if err != nil {
		return nil, err
	}
	return checked(fd, path)
}

// IsEntry says whether name (one component) in parent is this very folder
// (same device and inode), not a link or another folder put there since.
func (d *Dir) IsEntry(parent *Dir, name string) bool {
	var at, own unix.Stat_t
	if unix.Fstatat(parent.Fd(), name, &at, unix.AT_SYMLINK_NOFOLLOW) != nil || unix.Fstat(d.Fd(), &own) != nil {
		return false
	}
	return at.Mode&unix.S_IFMT == unix.S_IFDIR && at.Dev == own.Dev && at.Ino == own.Ino
}

// Clear removes everything inside the folder, beneath its handle: files
// and links (themselves) are unlinked, folders emptied the same way and
// removed; nothing is followed. It goes on past what it cannot remove and
// returns the first error.
func (d *Dir) Clear() error {
	names, err := d.ReadDir()
	if err != nil {
		return err
	}
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	for _, n := range names {
		err := unix.Unlinkat(d.Fd(), n, 0)
		if !errors.Is(err, unix.EISDIR) {
			keep(err)
			continue
		}
		sub, err := d.Sub(n)
		if err != nil {
			keep(err)
			continue
		}
		keep(sub.Clear())
		sub.Close()
		keep(unix.Unlinkat(d.Fd(), n, unix.AT_REMOVEDIR))
	}
	return first
}

// RemoveAll removes the folder name (one component) in d and all it
// holds, beneath d's handle and never through a link: a link at name is
// removed itself; a folder not the current user's (Check) is left alone.
func (d *Dir) RemoveAll(name string) error {
	if !local(name) || filepath.Base(name) != name || name == "." {
		return fmt.Errorf("%s: %q is not a name inside it", d.path, name)
	}
	err := unix.Unlinkat(d.Fd(), name, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) {
		return err
	}
	sub, err := d.Sub(name)
	if err != nil {
		return err
	}
	err = sub.Clear()
	sub.Close()
	if err2 := unix.Unlinkat(d.Fd(), name, unix.AT_REMOVEDIR); err == nil && err2 != nil {
		err = &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err2}
	}
	return err
}
