// Package safedir does file operations inside a folder that cannot leave
// it: every name is resolved beneath an open handle of the folder, one
// component at a time with O_NOFOLLOW, so a symbolic link anywhere inside
// is never followed, and a folder on the way that belongs to someone else
// is refused. Run folders are written and cleaned by whoever runs
// xrcbench, often root, in places other users can write: what they plant
// there (plots -> /etc) must not steer a write or a removal elsewhere.
//
// Why not os.Root: a Root follows symbolic links that stay inside it, so a
// removal of plots/x through plots -> sub removes sub/x, which nobody
// listed; and it does not look at who owns the folders it passes. Here no
// link is followed, ever, which is the simpler promise to keep and check.
package safedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrRefused is matched by the errors about a folder that is refused: a
// symbolic link, not a folder, or not the current user's.
var ErrRefused = errors.New("folder refused")

// RefusedError says why a folder was refused.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string        { return e.Path + ": " + e.Reason }
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Dir is an open folder.
type Dir struct {
	f    *os.File
	path string // for messages only: operations go through f
}

// Open opens the folder at path, following path as the user gave it (the
// user's own links are the user's choice), and checks it (Check).
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return nil, &RefusedError{path, "not a folder"}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return checked(fd, path)
}

func checked(fd int, path string) (*Dir, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := Check(path, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Dir{os.NewFile(uintptr(fd), path), path}, nil
}

// Check refuses a folder that another user owns, or, for a process running
// as root, one that anyone but root can write: its content is then
// another user's to arrange, and root must not act on it.
func Check(path string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &RefusedError{path, "not a folder"}
	}
	me := os.Geteuid()
	if int(st.Uid) != me {
		return &RefusedError{path, fmt.Sprintf("owned by user %d, not by you (user %d)", st.Uid, me)}
	}
	if me == 0 && st.Mode&0o022 != 0 {
		return &RefusedError{path, fmt.Sprintf("other users can write it (mode %04o), and a run as root does not work in such a folder", st.Mode&0o7777)}
	}
	return nil
}

// Path is the folder's path, for messages.
func (d *Dir) Path() string { return d.path }

// Fd is the folder's descriptor, for calls relative to it.
func (d *Dir) Fd() int { return int(d.f.Fd()) }

// Close closes the handle.
func (d *Dir) Close() error { return d.f.Close() }

// Stat is the folder's own stat.
func (d *Dir) Stat() (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.Fd(), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ReadDir lists the folder's entries' names.
func (d *Dir) ReadDir() ([]string, error) {
	// A fresh descriptor: reading a directory moves its offset.
	fd, err := unix.Openat(d.Fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// Lstat stats name (one component) in the folder without following it.
func (d *Dir) Lstat(name string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return &st, nil
}

// Sub opens the folder rel beneath d ("." is d itself, opened again),
// refusing a symbolic link or a folder not ours anywhere on the way.
func (d *Dir) Sub(rel string) (*Dir, error) {
	return d.walk(rel, false, 0)
}

// MkdirAll is Sub, making the folders that are missing with perm.
func (d *Dir) MkdirAll(rel string, perm uint32) (*Dir, error) {
	return d.walk(rel, true, perm)
}

func (d *Dir) walk(rel string, create bool, perm uint32) (*Dir, error) {
	if !local(rel) {
		return nil, fmt.Errorf("%s: %q is not a name inside it", d.path, rel)
	}
	fd, err := unix.Openat(d.Fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	path := d.path
	if rel == "." {
		return &Dir{os.NewFile(uintptr(fd), path), path}, nil
	}
	for _, comp := range strings.Split(rel, "/") {
		path = filepath.Join(path, comp)
		next, err := openNoFollow(fd, comp, path)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, comp, perm); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openNoFollow(fd, comp, path)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return nil, err
		}
		if err := Check(path, &st); err != nil {
			unix.Close(next)
			return nil, err
		}
		fd = next
	}
	return &Dir{os.NewFile(uintptr(fd), path), path}, nil
}

// openNoFollow opens the folder name in dirfd, never through a link.
func openNoFollow(dirfd int, name, path string) (int, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		return fd, nil
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return -1, &RefusedError{path, "a symbolic link: nothing is done through it"}
		case unix.S_IFDIR:
		default:
			return -1, &RefusedError{path, "not a folder"}
		}
	}
	return -1, &os.PathError{Op: "open", Path: path, Err: err}
}

// Split gives the folder part and the last component of rel.
func Split(rel string) (dir, base string) {
	dir, base = filepath.Split(rel)
	if dir = strings.TrimSuffix(dir, "/"); dir == "" {
		dir = "."
	}
	return dir, base
}

// Remove removes rel beneath d: a file, a link (itself, not what it names)
// or an empty folder. Folders on the way are resolved as by Sub.
func (d *Dir) Remove(rel string) error {
	dir, base := Split(rel)
	if !local(rel) || base == "" {
		return fmt.Errorf("%s: %q is not a name inside it", d.path, rel)
	}
	p, err := d.Sub(dir)
	if err != nil {
		return err
	}
	defer p.Close()
	err = unix.Unlinkat(p.Fd(), base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(p.Fd(), base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, rel), Err: err}
	}
	return nil
}

// RemoveDir removes the empty folder rel beneath d; a link there, or a
// folder with something in it, stays.
func (d *Dir) RemoveDir(rel string) error {
	dir, base := Split(rel)
	if !local(rel) || base == "" {
		return fmt.Errorf("%s: %q is not a name inside it", d.path, rel)
	}
	p, err := d.Sub(dir)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := unix.Unlinkat(p.Fd(), base, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, rel), Err: err}
	}
	return nil
}

// WriteFile writes data to rel beneath d atomically: a temporary file
// beside it, created exclusively, renamed over it (a link there is
// replaced, not followed). A reader never sees half a file.
func (d *Dir) WriteFile(rel string, data []byte, perm os.FileMode) error {
	dir, base := Split(rel)
	if !local(rel) || base == "" {
		return fmt.Errorf("%s: %q is not a name inside it", d.path, rel)
	}
	p := d
	if dir != "." {
		var err error
		if p, err = d.Sub(dir); err != nil {
			return err
		}
		defer p.Close()
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + base + ".tmp" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(p.Fd(), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(p.path, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(p.path, tmp))
	err = writeAll(f, data, perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(p.Fd(), tmp, p.Fd(), base)
	}
	if err != nil {
		unix.Unlinkat(p.Fd(), tmp, 0)
		return &os.PathError{Op: "write", Path: filepath.Join(p.path, base), Err: err}
	}
	return nil
}

func writeAll(f *os.File, data []byte, perm os.FileMode) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Chmod(perm)
}

// local says whether rel names something beneath the folder: relative,
// clean, not climbing out ("." is the folder itself).
func local(rel string) bool {
	return rel == "." || (rel != "" && filepath.IsLocal(rel) && filepath.Clean(rel) == rel)
}
