package safedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// Every operation beneath a folder refuses to pass a link, and a link in
// the last place is acted on itself (removed, replaced), never what it
// names: the file outside stays as it was.
func TestNoLinkFollowed(t *testing.T) {
	tests := []struct {
		name string
		op   func(d *Dir) error
		// refused: the op fails with ErrRefused; else it succeeds.
		refused bool
		// link: what the link in the folder is afterwards ("" gone).
		link string
	}{
		{"Sub through a link", func(d *Dir) error { _, err := d.Sub("link"); return err }, true, "link"},
		{"MkdirAll through a link", func(d *Dir) error { _, err := d.MkdirAll("link/new", 0o755); return err }, true, "link"},
		{"Remove through a link", func(d *Dir) error { return d.Remove("link/x") }, true, "link"},
		{"WriteFile through a link", func(d *Dir) error { return d.WriteFile("link/x", []byte("in"), 0o644) }, true, "link"},
		{"Remove the link", func(d *Dir) error { return d.Remove("link") }, false, ""},
		{"RemoveDir the link", func(d *Dir) error { return d.RemoveDir("link") }, false, "link"},
		{"WriteFile over the link", func(d *Dir) error { return d.WriteFile("link", []byte("in"), 0o644) }, false, "file"},
		{"Remove a name climbing out", func(d *Dir) error { return d.Remove("../outside/x") }, false, "link"},
		{"Create over the link", func(d *Dir) error { _, err := d.Create("link", 0o644); return err }, false, "link"},
		{"Mkdir over the link", func(d *Dir) error { _, err := d.Mkdir("link", 0o755); return err }, false, "link"},
		{"RemoveAll the link", func(d *Dir) error { return d.RemoveAll("link") }, false, ""},
		{"Clear the folder", func(d *Dir) error { return d.Clear() }, false, ""},
		{"Lock the link", func(d *Dir) error { _, _, err := d.Lock("link"); return err }, false, "link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			outside, in := filepath.Join(base, "outside"), filepath.Join(base, "in")
			os.MkdirAll(outside, 0o755)
			os.MkdirAll(in, 0o755)
			os.WriteFile(filepath.Join(outside, "x"), []byte("outside"), 0o644)
			os.Symlink(outside, filepath.Join(in, "link"))
			d, err := Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			err = tt.op(d)
			switch {
			case tt.refused && !errors.Is(err, ErrRefused):
				t.Errorf("err %v, want it refused", err)
			case tt.refused && !strings.Contains(err.Error(), "symbolic link"):
				t.Errorf("err %v does not say why", err)
			case !tt.refused && tt.link != "link" && err != nil:
				t.Errorf("err %v", err)
			}
			if data, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(data) != "outside" {
				t.Errorf("outside x: %q, %v", data, err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("outside holds %v", ents)
			}
			st, err := os.Lstat(filepath.Join(in, "link"))
			got := ""
			switch {
			case err != nil:
			case st.Mode()&os.ModeSymlink != 0:
				got = "link"
			default:
				got = "file"
			}
			if got != tt.link {
				t.Errorf("in/link is %q afterwards, want %q", got, tt.link)
			}
		})
	}
}

// A folder of another user's is refused, and (for root) one others can
// write.
func TestCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, testenv.Root, "to give a folder to another user")
	}
	base := t.TempDir()
	theirs, open := filepath.Join(base, "theirs"), filepath.Join(base, "open")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o1777)
	for path, want := range map[string]string{theirs: "owned by user 65534", open: "other users can write it"} {
		if _, err := Open(path); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want %q", path, err, want)
		}
		d, _ := Open(base)
		if _, err := d.Sub(filepath.Base(path)); !errors.Is(err, ErrRefused) {
			t.Errorf("Sub(%s): %v, want it refused", filepath.Base(path), err)
		}
		d.Close()
	}
}
