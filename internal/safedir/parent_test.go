package safedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Root writes only where no other user can swap its entries: the parent
// of a folder it writes into (OpenParent, OpenOut) is refused when
// another user owns it or can write it without the sticky bit, and a
// link another user made in a sticky folder is not followed; root's own
// link is. The lock beside a folder is refused when it is not root's own
// file with one name (a planted file, a hard link to one of root's).
func TestRootParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	const nobody = 65534
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) // makes base/p/out or what stands there
		op    func(base string) error
		want  string // in the error; "" for none
	}{
		{"a parent of another user's", func(t *testing.T, base string) {
			os.Chown(filepath.Join(base, "p"), nobody, nobody)
		}, openOut, "owned by user 65534, who could swap"},
		{"a parent anyone can write", func(t *testing.T, base string) {
			os.Chmod(filepath.Join(base, "p"), 0o777)
		}, openOut, "mode 0777, no sticky bit"},
		{"a parent its group can write", func(t *testing.T, base string) {
			os.Chmod(filepath.Join(base, "p"), 0o775)
		}, openOut, "mode 0775, no sticky bit"},
		{"a sticky parent anyone can write", func(t *testing.T, base string) {
			os.Chmod(filepath.Join(base, "p"), os.ModeSticky|0o777)
		}, openOut, ""},
		{"a link of another user's in a sticky parent", func(t *testing.T, base string) {
			os.Chmod(filepath.Join(base, "p"), os.ModeSticky|0o777)
			os.Mkdir(filepath.Join(base, "elsewhere"), 0o755)
			link := filepath.Join(base, "p", "out")
			os.Symlink(filepath.Join(base, "elsewhere"), link)
			os.Lchown(link, nobody, nobody)
		}, openOut, "a symbolic link of user 65534's"},
		{"a link of root's", func(t *testing.T, base string) {
			os.Mkdir(filepath.Join(base, "elsewhere"), 0o755)
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "p", "out"))
		}, openOut, ""},
		{"a lock another user planted", func(t *testing.T, base string) {
			lock := filepath.Join(base, "p", LockName("out"))
			os.WriteFile(lock, nil, 0o666)
			os.Chown(lock, nobody, nobody)
		}, lock, "not a lock of this user's (a file of user 65534's"},
		{"a lock hard-linked to a file of root's", func(t *testing.T, base string) {
			os.WriteFile(filepath.Join(base, "secret"), []byte("secret"), 0o600)
			os.Link(filepath.Join(base, "secret"), filepath.Join(base, "p", LockName("out")))
		}, lock, "2 names"},
		{"a lock of root's own", func(t *testing.T, base string) {}, lock, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			os.Mkdir(filepath.Join(base, "p"), 0o755)
			tt.setup(t, base)
			err := tt.op(base)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err %v", err)
			case tt.want != "" && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err %v, want it refused saying %q", err, tt.want)
			}
			if data, err := os.ReadFile(filepath.Join(base, "secret")); err == nil && string(data) != "secret" {
				t.Fatalf("root's file through the lock's other name: %q", data)
			}
		})
	}
}

// openOut opens base/p/out as a command's output folder and writes a file
// into it.
func openOut(base string) error {
	d, err := OpenOut(filepath.Join(base, "p", "out"), true)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile("f", []byte("x"), 0o644)
}

// lock takes and lets go of the lock beside base/p/out.
func lock(base string) error {
	d, err := OpenParent(filepath.Join(base, "p"))
	if err != nil {
		return err
	}
	defer d.Close()
	l, _, err := d.Lock(LockName("out"))
	if err != nil {
		return err
	}
	l.Unlock()
	return nil
}
