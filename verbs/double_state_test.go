package verbs

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// The double's state folder (issue: a predictable /tmp name another local
// user could pre-create, plant symbolic links in, or make world-writable)
// and its settings (a changed XRCBENCH_FAKEVERBS_COST on the same folder
// failed as a bare EEXIST naming a uverbs file that does not exist).

func init() {
	// "open": open the rdma device and close it; the error, if any, is
	// printed as "open error: <errno name>: <message>" and the case passes.
	doubleCases["open"] = func(t *testing.T, _ string) {
		dev, err := Open(Options{Provider: "rdma", Device: "xbfake0"})
		if err != nil {
			fmt.Printf("open error: %s: %v\n", errnoName(errnoOf(err)), err)
			return
		}
		fmt.Println("open ok")
		dev.Close()
	}
	// "hold": open the rdma device, say "ready", and keep it open until
	// stdin closes.
	doubleCases["hold"] = func(t *testing.T, _ string) {
		dev, err := Open(Options{Provider: "rdma", Device: "xbfake0"})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
}

func errnoOf(err error) syscall.Errno {
	for _, e := range []syscall.Errno{syscall.EPERM, syscall.EEXIST, syscall.ELOOP, syscall.ENOTDIR, syscall.EACCES, syscall.EIO, syscall.EINVAL} {
		if errors.Is(err, e) {
			return e
		}
	}
	return 0
}

// doubleCmd is a child of this test binary running double case name with
// the double's state in state; shell, when set, is a sh -c script run
// first in the same process ($$ is the child's pid), ending with exec.
func doubleCmd(t *testing.T, ctx context.Context, state, name, shell string, env ...string) *exec.Cmd {
	lib := doubleLibDir(t)
	args := []string{os.Args[0], "-test.run=^TestInDouble$", "-test.v", "-test.count=1"}
	var cmd *exec.Cmd
	if shell != "" {
		cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", shell + `; exec "$@"`, "sh"}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
	}
	cmd.Env = append(append(doubleEnv(lib, state, "xbfake0"), doubleCaseEnv+"="+name), env...)
	return cmd
}

// openInDouble runs case "open" and returns its result line and stderr.
func openInDouble(t *testing.T, state, shell string, env ...string) (result, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := doubleCmd(t, ctx, state, "open", shell, env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
	}
	for _, l := range strings.Split(o.String(), "\n") {
		if strings.HasPrefix(l, "open ") {
			return l, strings.TrimSpace(e.String())
		}
	}
	t.Fatalf("child said nothing of its open:\n%s", o.String())
	return "", ""
}

// TestDoubleHostileStateFolder: a state folder that is not ours, is open
// to others, or holds planted symbolic links is refused with one line on
// stderr (or its plants are not written through); before, it was used as
// it was.
func TestDoubleHostileStateFolder(t *testing.T) {
	doubleLibDir(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, testenv.Root, "to make a folder owned by another uid")
	}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, state, victim string) string // returns a shell prelude, or ""
		result  string                                          // prefix of the child's open line
		stderr  []string                                        // words of the one stderr line; nil: no line
	}{
		{"owned by another uid", func(t *testing.T, state, victim string) string {
			mustDo(t, os.Mkdir(state, 0o700), os.Chown(state, 65534, 65534))
			return ""
		}, "open error: EPERM", []string{"belongs to uid 65534", "refusing it", "XRCBENCH_FAKEVERBS_DIR"}},
		{"mode 0777", func(t *testing.T, state, victim string) string {
			mustDo(t, os.Mkdir(state, 0o700), os.Chmod(state, 0o777))
			return ""
		}, "open error: EPERM", []string{"open to group or other (mode 0777)", "refusing it"}},
		{"a symbolic link", func(t *testing.T, state, victim string) string {
			mustDo(t, os.Symlink(victim, state))
			return ""
		}, "open error", []string{"symbolic link", "refusing it"}},
		{"sysfs planted as a link", func(t *testing.T, state, victim string) string {
			mustDo(t, os.Mkdir(state, 0o700), os.Symlink(victim, filepath.Join(state, "sysfs")))
			return ""
		}, "open error", []string{"cannot lay out the fake sysfs"}},
		{"device folder planted as a link", func(t *testing.T, state, victim string) string {
			mustDo(t, os.Mkdir(state, 0o700), os.Symlink(victim, filepath.Join(state, "xbfake0")))
			return ""
		}, "open error", []string{"symbolic link or not a folder", "refusing it"}},
		{"fw_ver.<pid>.tmp planted as a link", func(t *testing.T, state, victim string) string {
			cls := filepath.Join(state, "sysfs", "class", "infiniband", "xbfake0")
			mustDo(t, os.Mkdir(state, 0o700), os.MkdirAll(cls, 0o700))
			return fmt.Sprintf(`ln -s %s %s/fw_ver.$$.tmp`, filepath.Join(victim, "secret"), cls)
		}, "open ok", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			state, victim := filepath.Join(base, "state"), filepath.Join(base, "victim")
			mustDo(t, os.Mkdir(victim, 0o700), os.WriteFile(filepath.Join(victim, "secret"), []byte("root only\n"), 0o600))
			shell := tc.prepare(t, state, victim)
			result, stderr := openInDouble(t, state, shell)
			if !strings.HasPrefix(result, tc.result) {
				t.Fatalf("child: %q, want %q...\nstderr: %s", result, tc.result, stderr)
			}
			lines := 0
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "fakeverbs: ") {
					lines++
					for _, w := range tc.stderr {
						if !strings.Contains(l, w) {
							t.Errorf("stderr line %q lacks %q", l, w)
						}
					}
				}
			}
			if want := min(len(tc.stderr), 1); lines != want {
				t.Errorf("%d fakeverbs lines on stderr, want %d:\n%s", lines, want, stderr)
			}
			// Nothing was written through a plant.
			got, err := os.ReadFile(filepath.Join(victim, "secret"))
			if err != nil || string(got) != "root only\n" {
				t.Errorf("the victim file is now %q (%v)", got, err)
			}
			if ents, _ := os.ReadDir(victim); len(ents) != 1 {
				t.Errorf("files were made in the victim folder: %d entries", len(ents))
			}
		})
	}
}

// TestDoubleSettingsChange: a new XRCBENCH_FAKEVERBS_COST on a state
// folder applies when no process uses its device, and fails with one line
// naming the folder, the old and the new setting and how to get out while
// one does.
func TestDoubleSettingsChange(t *testing.T) {
	doubleLibDir(t)
	state := filepath.Join(t.TempDir(), "state")
	costOf := func() uint64 {
		b, err := os.ReadFile(filepath.Join(state, "xbfake0", "sim.dev"))
		if err != nil || len(b) < offCostReg+8 {
			t.Fatalf("reading the device: %v", err)
		}
		return binary.LittleEndian.Uint64(b[offCostReg:])
	}
	for _, cost := range []string{"reg=1us", "reg=3us"} {
		if r, e := openInDouble(t, state, "", "XRCBENCH_FAKEVERBS_COST="+cost); r != "open ok" {
			t.Fatalf("with %s: %s\n%s", cost, r, e)
		}
	}
	if got := costOf(); got != 3000 {
		t.Fatalf("reg cost in the device %dns, want the new setting, 3000ns", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder := doubleCmd(t, ctx, state, "hold", "", "XRCBENCH_FAKEVERBS_COST=reg=3us")
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		holder.Wait()
	}()
	for sc := bufio.NewScanner(stdout); ; {
		if !sc.Scan() {
			t.Fatal("the holder ended before it was ready")
		}
		if sc.Text() == "ready" {
			break
		}
	}
	r, e := openInDouble(t, state, "", "XRCBENCH_FAKEVERBS_COST=reg=5us")
	if !strings.HasPrefix(r, "open error: EEXIST") {
		t.Fatalf("a second setting while the device is in use: %q, want EEXIST", r)
	}
	if strings.Contains(r, "uverbs") || !strings.Contains(r, "test double") {
		t.Errorf("the error %q must not blame a uverbs file, and must point at the double", r)
	}
	var line string
	for _, l := range strings.Split(e, "\n") {
		if strings.HasPrefix(l, "fakeverbs: ") {
			if line != "" {
				t.Fatalf("more than one line:\n%s", e)
			}
			line = l
		}
	}
	for _, w := range []string{state, "reg=3000ns", "reg=5000ns", "XRCBENCH_FAKEVERBS_DIR", "in use"} {
		if !strings.Contains(line, w) {
			t.Errorf("stderr line %q lacks %q", line, w)
		}
	}
	if got := costOf(); got != 3000 {
		t.Errorf("the device in use was changed: reg cost %dns", got)
	}
}
