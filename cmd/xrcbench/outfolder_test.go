package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// history, report --fleet and export --out, run as root, write only
// where no other user can steer the write: a folder of another user's, a
// folder of root's inside one (whose owner can swap it for a link at any
// moment), and a link another user put where the folder goes, are
// refused, exit 2, one line; nothing is written, and root's folder the
// link names keeps its files. Before, each wrote by path (the audit's
// history replaced a root-only history.json through a swapped link).
func TestOutputFolderOfAnotherUser(t *testing.T) {
	judgesNoTime(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to give folders to another user")
	}
	const nobody = 65534
	x, other := fixture("engine-lifecycle-rtr"), fixture("engine-lifecycle-rtr-modify25")
	fleet := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 7))
	for _, n := range []string{"n1", "n2", "n3"} {
		writeNodeReps(t, fleet, n, 2000, 3, rng)
	}
	commands := []struct {
		name  string
		args  func(out string) []string
		files []string // written into out
	}{
		{"history", func(out string) []string { return []string{"history", x, other, "--out", out} }, []string{"history.json", "history.html"}},
		{"report --fleet", func(out string) []string { return []string{"report", "--fleet", fleet, "--out", out} }, []string{"fleet.json", "fleet.html"}},
		{"export --out", func(out string) []string {
			return []string{"export", x, "--format", "csv", "--out", filepath.Join(out, "bench.csv")}
		}, []string{"bench.csv"}},
	}
	folders := []struct {
		name string
		// setup makes the folder (out) and a folder of root's, secret,
		// that a link may name.
		setup func(t *testing.T, base, secret string) (out string)
		want  string // "" for written
	}{
		{"root's own folder", func(t *testing.T, base, secret string) string {
			out := filepath.Join(base, "out")
			os.Mkdir(out, 0o755)
			return out
		}, ""},
		{"another user's folder", func(t *testing.T, base, secret string) string {
			out := filepath.Join(base, "out")
			os.Mkdir(out, 0o755)
			os.Chown(out, nobody, nobody)
			return out
		}, "owned by user 65534"},
		{"root's folder in another user's", func(t *testing.T, base, secret string) string {
			theirs := filepath.Join(base, "theirs")
			os.Mkdir(theirs, 0o755)
			os.Chown(theirs, nobody, nobody)
			out := filepath.Join(theirs, "out")
			os.Mkdir(out, 0o755)
			return out
		}, "owned by user 65534, who could swap"},
		{"another user's link in a sticky folder", func(t *testing.T, base, secret string) string {
			shared := filepath.Join(base, "shared")
			os.Mkdir(shared, 0o755)
			os.Chmod(shared, os.ModeSticky|0o777)
			out := filepath.Join(shared, "out")
			os.Symlink(secret, out)
			os.Lchown(out, nobody, nobody)
			return out
		}, "a symbolic link of user 65534's"},
	}
	for _, c := range commands {
		for _, f := range folders {
			t.Run(c.name+", "+f.name, func(t *testing.T) {
				base := t.TempDir()
				secret := filepath.Join(base, "secret")
				precious := map[string]string{}
				for _, n := range c.files {
					precious[n] = "root's own " + n
				}
				writeTree(t, secret, precious)
				out := f.setup(t, base, secret)
				code, stdout, stderr := runCLI(c.args(out)...)
				if f.want == "" {
					if code != exitOK {
						t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
					}
					for _, n := range c.files {
						if st, err := os.Stat(filepath.Join(out, n)); err != nil || st.Mode() != 0o644 {
							t.Errorf("%s: %v, %v", n, st, err)
						}
					}
					return
				}
				if code != exitUsage || !strings.Contains(stderr, f.want) {
					t.Fatalf("exit %d, want %d saying %q\n%s", code, exitUsage, f.want, stderr)
				}
				checkOneLine(t, stderr)
				for n, content := range precious {
					if data, err := os.ReadFile(filepath.Join(secret, n)); err != nil || string(data) != content {
						t.Errorf("root's %s through the link: %q, %v", n, data, err)
					}
					if _, err := os.Lstat(filepath.Join(out, n)); err == nil && f.name != "another user's link in a sticky folder" {
						t.Errorf("%s written into a refused folder", n)
					}
				}
			})
		}
	}
}

// writeTree writes files (name → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
