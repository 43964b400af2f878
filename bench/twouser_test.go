package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// The two-user test: a run (the victim, root or an unprivileged user) goes
// into a folder another user (the racer) can write, who renames each
// run's temporary folder away the moment it appears and puts a link to a
// folder of the victim's in its place. Both are the test binary, run as
// those users.
const (
	victimEnv = "XRCBENCH_TEST_VICTIM" // the shared folder the victim runs into
	racerEnv  = "XRCBENCH_TEST_RACER"  // the shared folder the racer watches
)

// victimChild runs $XRCBENCH_TEST_VICTIM_N runs into run-<i> of the
// shared folder, each as Run writes its folder (the run folder, the .hlog
// writer, result.json and the commit), and says for each "ok <i> <run
// id>", "refused <i> <why>" or "failed <i> <why>". Each step waits a
// little, so the racer can win every window, and the first, once the
// temporary folder is made, waits up to 20 ms for the racer to swap it
// (on a loaded machine the racer may not run for a while).
func victimChild(shared string) {
	n, _ := strconv.Atoi(os.Getenv(victimEnv + "_N"))
	var out string
	runfolder.CommitStep = func(step string) {
		time.Sleep(time.Millisecond)
		for start := time.Now(); step == "opened" && time.Since(start) < 20*time.Millisecond; time.Sleep(time.Millisecond) {
			tmp, _ := filepath.Glob(filepath.Join(shared, "."+filepath.Base(out)+".tmp-*"))
			if len(tmp) > 0 {
				if st, err := os.Lstat(tmp[0]); err == nil && st.Mode()&fs.ModeSymlink != 0 {
					break
				}
			}
		}
	}
	for i := range n {
		out = filepath.Join(shared, fmt.Sprintf("run-%d", i))
		id, err := racedRun(out)
		line := ""
		if err != nil {
			line = strings.ReplaceAll(err.Error(), "\n", " ")
		}
		switch {
		case errors.Is(err, runfolder.ErrOutFolder):
			fmt.Printf("refused %d %s\n", i, line)
		case err != nil:
			fmt.Printf("failed %d %s\n", i, line)
		default:
			fmt.Printf("ok %d %s\n", i, id)
		}
	}
}

// step runs the commit's test hook (runfolder.CommitStep) between
// racedRun's own steps, as the commit runs it between its.
func step(name string) {
	if runfolder.CommitStep != nil {
		runfolder.CommitStep(name)
	}
}

// racedRun is what Run does with its folder, without the measuring.
func racedRun(out string) (string, error) {
	id := results.NewRunID()
	rf, err := runfolder.Open(out, id)
	if err != nil {
		return id, err
	}
	step("opened")
	logs, err := newHlogs(rf.TmpDir(), id, []string{"reg"}, time.Now(), time.Second)
	if err != nil {
		rf.Discard()
		return id, err
	}
	step("logs made")
	if err := logs.close(); err != nil {
		rf.Discard()
		return id, err
	}
	committed, err := rf.Write(resultstest.Minimal(id, "reg.hlog"), out)
	if !committed {
		rf.Discard()
	}
	return id, err
}

// racerChild watches the shared folder until a file "stop" appears in
// it: every run's temporary folder it sees it renames to moved-<n> and
// replaces with a link to $XRCBENCH_TEST_RACER_TARGET. It says how many
// it swapped and of how many the rename was refused.
func racerChild(shared string) {
	target := os.Getenv(racerEnv + "_TARGET")
	swapped, n := 0, 0
	denied := map[string]bool{}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
		if _, err := os.Lstat(filepath.Join(shared, "stop")); err == nil {
			break
		}
		f, err := os.Open(shared)
		if err != nil {
			fmt.Println("racer:", err)
			return
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, name := range names {
			if !strings.HasPrefix(name, ".run-") || !strings.Contains(name, ".tmp-") {
				continue
			}
			p := filepath.Join(shared, name)
			if st, err := os.Lstat(p); err != nil || !st.IsDir() {
				continue
			}
			n++
			if err := os.Rename(p, filepath.Join(shared, fmt.Sprintf("moved-%d", n))); err != nil {
				if errors.Is(err, fs.ErrPermission) {
					denied[name] = true
				}
				continue
			}
			if os.Symlink(target, p) == nil {
				swapped++
			}
		}
	}
	fmt.Printf("swapped %d denied %d\n", swapped, len(denied))
}

// Another user who can write the folder a run goes into must not steer
// the run's writes: 200 runs, each raced by a renamer that swaps the
// temporary folder for a link to a folder of the victim's (run as root,
// the old code truncated a root-only file through it). Root refuses a
// parent others can write without the sticky bit; with it, the racer's
// renames are refused by the kernel; an unprivileged victim, not refused,
// writes only into the folders it made, wherever they were moved, and
// puts nothing in place that is not its own. Nothing in the victim's
// folder changes, ever.
func TestTwoUsersRacingRenamer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the two-user test runs its users as root's children")
	}
	const runs = 200
	const victimUID, racerUID = 65533, 65534
	tests := []struct {
		name   string
		victim int // uid
		mode   os.FileMode
		// want is what every run must end as; raced, that the racer
		// swapped (or, in a sticky folder, was refused) at least half
		// of the runs' folders, so that the race was run at all.
		want      string
		swapped   bool
		denied    bool
		refusedBy string
	}{
		{"root, parent anyone can write", 0, 0o777, "refused", false, false, "other users can write it (mode 0777, no sticky bit)"},
		{"root, parent anyone can write, sticky", 0, 0o777 | os.ModeSticky, "ok", false, true, ""},
		{"unprivileged user, parent anyone can write", victimUID, 0o777, "failed", true, false, ""},
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not t.TempDir(): its folders are root's alone, and the
			// users must reach the binary and the shared folder.
			base, err := os.MkdirTemp("", "xrcbench-twousers-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			os.Chmod(base, 0o755)
			bin := filepath.Join(base, "bench.test")
			copyFile(t, exe, bin, 0o755)
			shared, target := filepath.Join(base, "shared"), filepath.Join(base, "target")
			os.Mkdir(shared, 0o755)
			if err := os.Chmod(shared, tt.mode); err != nil {
				t.Fatal(err)
			}
			// The victim's own folder, which only it may write: a
			// result.json and a .hlog, as a run's, that no write of the
			// run may truncate or replace.
			testenv.WriteTree(t, target, map[string]string{"reg.hlog": "precious log\n", results.FileName: "precious result\n"})
			for _, p := range []string{target, filepath.Join(target, "reg.hlog"), filepath.Join(target, results.FileName)} {
				os.Chown(p, tt.victim, tt.victim)
				os.Chmod(p, 0o600)
			}
			os.Chmod(target, 0o700)
			before := testenv.Tree(t, target)

			racer := exec.Command(bin)
			racer.Env = append(os.Environ(), racerEnv+"="+shared, racerEnv+"_TARGET="+target)
			racer.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: racerUID, Gid: racerUID}}
			racerOut, err := racer.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			racer.Stderr = os.Stderr
			if err := racer.Start(); err != nil {
				t.Fatal(err)
			}
			victim := exec.Command(bin)
			victim.Env = append(os.Environ(), victimEnv+"="+shared, victimEnv+"_N="+strconv.Itoa(runs))
			if tt.victim != 0 {
				victim.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tt.victim), Gid: uint32(tt.victim)}}
			}
			got, verr := victim.CombinedOutput()
			os.WriteFile(filepath.Join(shared, "stop"), nil, 0o644)
			said, _ := io.ReadAll(racerOut)
			if err := racer.Wait(); err != nil {
				t.Fatalf("racer: %v\n%s", err, said)
			}
			if verr != nil {
				t.Fatalf("victim: %v\n%s", verr, got)
			}
			var swapped, denied int
			if _, err := fmt.Sscanf(string(said), "swapped %d denied %d", &swapped, &denied); err != nil {
				t.Fatalf("racer said %q", said)
			}

			if after := testenv.Tree(t, target); !maps.Equal(before, after) {
				t.Fatalf("a write landed in the victim's folder through the racer's link:\nbefore %v\nafter  %v", before, after)
			}
			lines := strings.Split(strings.TrimSpace(string(got)), "\n")
			if len(lines) != runs {
				t.Fatalf("the victim said %d lines for %d runs:\n%s", len(lines), runs, got)
			}
			outcomes := map[string]int{}
			for i, l := range lines {
				f := strings.SplitN(l, " ", 3)
				if len(f) != 3 || f[1] != strconv.Itoa(i) {
					t.Fatalf("run %d: %q", i, l)
				}
				if outcomes[f[0]] == 0 && f[0] != "ok" {
					t.Logf("the first run %s: %s", f[0], f[2])
				}
				outcomes[f[0]]++
				out := filepath.Join(shared, "run-"+f[1])
				st, err := os.Lstat(out)
				switch {
				case f[0] == "ok":
					if err != nil || !st.IsDir() {
						t.Fatalf("run %d ok, but %s is %v (%v)", i, out, st, err)
					}
					if r := readRun(t, out); r.RunID != f[2] {
						t.Fatalf("run %d ok as %s, but %s holds run %s", i, f[2], out, r.RunID)
					}
				case err == nil && !st.IsDir():
					t.Fatalf("run %d (%s) left %s as a %v, not a folder", i, l, out, st.Mode())
				}
				if f[0] == "refused" && !strings.Contains(l, tt.refusedBy) {
					t.Fatalf("run %d refused for another reason: %s", i, l)
				}
			}
			t.Logf("the racer swapped %d of %d runs' folders and was refused the rename of %d; the runs: %v", swapped, runs, denied, outcomes)
			if outcomes[tt.want] == 0 || (tt.want != "failed" && outcomes[tt.want] != runs) {
				t.Fatalf("outcomes %v, want every run %s\n%s", outcomes, tt.want, got)
			}
			if tt.want == "failed" && outcomes["failed"] < swapped-outcomes["ok"] {
				t.Fatalf("outcomes %v for %d swapped folders", outcomes, swapped)
			}
			if tt.swapped && swapped < runs/2 || tt.denied && denied < runs/2 {
				t.Fatalf("the racer swapped %d and was refused %d of %d runs' folders: too few to show anything", swapped, denied, runs)
			}
			if tt.want == "refused" {
				if left := testenv.Tree(t, shared); !maps.Equal(left, map[string]string{".": "folder", "stop": "file "}) {
					t.Fatalf("refused runs left %v", left)
				}
			}
		})
	}
}

// readRun loads the run in out and checks that its .hlog names it.
func readRun(t *testing.T, out string) *results.Result {
	t.Helper()
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "reg.hlog"))
	if err != nil || !strings.Contains(string(data), results.HlogRunIDPrefix+r.RunID+"\n") {
		t.Fatalf("%s: reg.hlog is not run %s's (%v):\n%s", out, r.RunID, err, data)
	}
	return r
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}
