package runfolder

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// commitEnv makes the test binary a small run that commits into the
// folder named (commitChild): the real commit, in a real process, for a
// test to kill.
const commitEnv = "XRCBENCH_TEST_COMMIT"

// fakeCommit is a run into out as Run makes it, without the measuring:
// its .hlog files name the run, result.json is written last, then the
// commit. It returns the run id and what the run said it recovered.
func fakeCommit(out string, kinds ...string) (string, []string, error) {
	var said []string
	id, err := fakeCommitTelling(out, func(l string) { said = append(said, l) }, kinds...)
	return id, said, err
}

// fakeCommitTelling is fakeCommit telling each line as it comes.
func fakeCommitTelling(out string, tell func(string), kinds ...string) (string, error) {
	id := results.NewRunID()
	rf, err := Open(out, id)
	if err != nil {
		return id, err
	}
	for _, l := range rf.recovered {
		tell(l)
	}
	step("opened")
	var files []string
	for _, k := range kinds {
		name := k + ".hlog"
		if err := os.WriteFile(filepath.Join(rf.dir(), name), []byte("#xrcbench-run-id: "+id+"\n"), 0o644); err != nil {
			rf.Discard()
			return id, err
		}
		files = append(files, name)
	}
	res := resultstest.Minimal(id, files...)
	if err := results.Write(rf.dir(), res); err != nil {
		rf.Discard()
		return id, err
	}
	rf.recovered = nil
	err = rf.commit(res.Files)
	for _, l := range rf.recovered {
		tell(l)
	}
	return id, err
}

// commitChild is the test binary as a run committing into the folder
// $XRCBENCH_TEST_COMMIT, saying each step of the commit on stdout and
// sleeping between them ($XRCBENCH_TEST_COMMIT_STEP_MS): the windows a
// kill must not hurt in, widened. Afterwards it records, as report does,
// files through the folder's links.
func commitChild(out string) {
	ms, _ := strconv.Atoi(os.Getenv("XRCBENCH_TEST_COMMIT_STEP_MS"))
	CommitStep = func(name string) {
		fmt.Printf("step %s\n", name)
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	step("start") // before the recovery a kill may also fall into
	if os.Getenv("XRCBENCH_TEST_NO_EXCHANGE") == "1" {
		renameExchange = func(int, string, string) error { return unix.EINVAL }
	}
	id, err := fakeCommitTelling(out, func(l string) { fmt.Println("note: " + l) }, "reg", "unreg")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("step committed")
	// What report records: a plot through the link, and one of its own.
	d, err := safedir.Open(out)
	if err == nil {
		if p, err := d.MkdirAll("plots", 0o755); err == nil {
			p.WriteFile("a.png", []byte(id), 0o644)
			p.Close()
		}
		d.Close()
	}
	results.WriteManifest(out, id, []string{"plots/a.png", "link/x", "link/sub/y", "plots/evil"})
	fmt.Println("step done")
}

// readableRun checks that out holds one whole run: its result loads, and
// every file it lists is there and names it.
func readableRun(t *testing.T, out string) *results.Result {
	t.Helper()
	r, err := results.Load(out)
	if err != nil {
		t.Fatalf("%s holds no run: %v\n%v", out, err, testenv.Tree(t, filepath.Dir(out)))
	}
	for _, f := range r.Files {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("run %s lacks %s: %v", r.RunID, f, err)
		}
		if strings.HasSuffix(f, ".hlog") && string(data) != "#xrcbench-run-id: "+r.RunID+"\n" {
			t.Fatalf("run %s: %s is another run's (%q): a mix", r.RunID, f, data)
		}
	}
	return r
}

// The outside of a run folder: files a symbolic link in the folder points
// at, which no write and no removal in the folder may reach.
var outsideFiles = map[string]string{"x": "outside x", "sub/y": "outside y", "a.png": "outside png"}

// plantLinks puts in the run folder out what another user who can write
// it would: links to outside, and records of report's that name files
// through them.
func plantLinks(t *testing.T, out, outside, runID string) {
	t.Helper()
	testenv.WriteTree(t, out, map[string]string{
		"link":       "link to " + outside,
		"plots/evil": "link to " + filepath.Join(outside, "x"),
		"reg.hlog":   "#xrcbench-run-id: " + runID + "\n",
	})

	// plots itself a link: report would write through it.
	if err := results.WriteManifest(out, runID, []string{"link/x", "link/sub/y", "plots/evil", "../outside/x"}); err != nil {
		t.Fatal(err)
	}
}

// A run into a folder holding symbolic links removes what the earlier run
// listed, and nothing through a link: every file outside stays as it was,
// the user's links come across as they were.
func TestRunFolderLinksNotFollowed(t *testing.T) {
	tests := []struct {
		name   string
		plant  func(t *testing.T, out, outside, runID string)
		listed []string // in the earlier result's files
	}{
		{"links in report's record", plantLinks, nil},
		{"links in the result's files", func(t *testing.T, out, outside, runID string) {
			testenv.WriteTree(t, out, map[string]string{"link": "link to " + outside})
		}, []string{"link/x", "link/sub/y", "link"}},
		{"plots a link, report's plot in it", func(t *testing.T, out, outside, runID string) {
			testenv.WriteTree(t, out, map[string]string{"plots": "link to " + outside})
			results.WriteManifest(out, runID, []string{"plots/a.png", "plots/x"})
		}, nil},
		{"a listed file a link", func(t *testing.T, out, outside, runID string) {
			testenv.WriteTree(t, out, map[string]string{"unreg.hlog": "link to " + filepath.Join(outside, "x")})
		}, []string{"unreg.hlog"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			outside, out := filepath.Join(base, "outside"), filepath.Join(base, "runs", "run")
			testenv.WriteTree(t, outside, outsideFiles)
			before := testenv.Tree(t, outside)
			// The earlier run, then what was planted in it.
			earlier := results.NewRunID()
			testenv.WriteTree(t, out, map[string]string{"notes.txt": "mine"})
			tt.plant(t, out, outside, earlier)
			if err := results.Write(out, resultstest.Minimal(earlier, tt.listed...)); err != nil {
				t.Fatal(err)
			}
			// The links nobody listed are the user's, to come across.
			links := map[string]string{}
			recorded := tt.listed
			if m, err := results.LoadManifest(out); err == nil {
				recorded = append(recorded, m.Files...)
			}
			for name, what := range testenv.Tree(t, out) {
				if strings.HasPrefix(what, "link to ") && !slices.Contains(recorded, name) {
					links[name] = what
				}
			}

			if _, _, err := fakeCommit(out, "reg"); err != nil {
				t.Fatal(err)
			}
			if after := testenv.Tree(t, outside); !maps.Equal(before, after) {
				t.Errorf("outside the folder changed:\nbefore %v\nafter  %v", before, after)
			}
			r := readableRun(t, out)
			if r.RunID == earlier {
				t.Fatal("the new run is not in place")
			}
			now := testenv.Tree(t, out)
			for name, what := range links {
				if now[name] != what {
					t.Errorf("the user's %s (%s) is now %q", name, what, now[name])
				}
			}
			if now["notes.txt"] != "file mine" {
				t.Errorf("notes.txt: %q", now["notes.txt"])
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.*")); len(left) != 0 {
				t.Errorf("left beside the folder: %v", left)
			}
		})
	}
}

// A run folder that is a link, or another user's, or (for root) one other
// users can write, is refused whole: nothing in it or beside it changes.
func TestRunFolderRefused(t *testing.T) {
	other := func(t *testing.T, path string) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a folder to another user")
		}
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, out, elsewhere string)
		want  string
	}{
		{"a link to a run folder", func(t *testing.T, out, elsewhere string) {
			os.Symlink(elsewhere, out)
		}, "a symbolic link"},
		{"another user's run folder", func(t *testing.T, out, elsewhere string) {
			os.Rename(elsewhere, out)
			other(t, out)
		}, "owned by user 65534"},
		{"another user's empty folder", func(t *testing.T, out, elsewhere string) {
			os.Mkdir(out, 0o755)
			other(t, out)
		}, "owned by user 65534"},
		{"a run folder anyone can write", func(t *testing.T, out, elsewhere string) {
			if os.Geteuid() != 0 {
				t.Skip("the mode matters to root only")
			}
			os.Rename(elsewhere, out)
			os.Chmod(out, 0o777)
		}, "other users can write it"},
		// Root's run into a folder another user can rename its entries in:
		// they could swap the run's folder for a link (TestTwoUsersRacingRenamer).
		{"run as root, a parent another user owns", func(t *testing.T, out, elsewhere string) {
			os.Rename(elsewhere, out)
			other(t, filepath.Dir(out))
		}, "owned by user 65534, who could swap what root writes there"},
		{"run as root, a parent anyone can write", func(t *testing.T, out, elsewhere string) {
			if os.Geteuid() != 0 {
				t.Skip("the mode matters to root only")
			}
			os.Rename(elsewhere, out)
			os.Chmod(filepath.Dir(out), 0o777)
		}, "other users can write it (mode 0777, no sticky bit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			elsewhere, out := filepath.Join(base, "elsewhere"), filepath.Join(base, "runs", "run")
			os.MkdirAll(filepath.Dir(out), 0o755)
			testenv.WriteTree(t, elsewhere, map[string]string{"notes.txt": "mine", "reg.hlog": "#xrcbench-run-id: 1\n"})
			results.Write(elsewhere, resultstest.Minimal("1", "reg.hlog"))
			tt.setup(t, out, elsewhere)
			before := testenv.Tree(t, base)
			_, _, err := fakeCommit(out, "reg")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("err %v, want it to say %q and that nothing was changed", err, tt.want)
			}
			if after := testenv.Tree(t, base); !maps.Equal(before, after) {
				t.Errorf("changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// A subfolder of the run folder owned by another user is not entered:
// what is listed in it stays, and so does the folder.
func TestRunFolderOtherUsersSubfolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	out := filepath.Join(t.TempDir(), "run")
	earlier := results.NewRunID()
	testenv.WriteTree(t, out, map[string]string{"theirs/x": "theirs", "plots/a.png": "ours"})
	os.Chown(filepath.Join(out, "theirs"), 65534, 65534)
	results.WriteManifest(out, earlier, []string{"theirs/x", "plots/a.png"})
	results.Write(out, resultstest.Minimal(earlier))
	if _, _, err := fakeCommit(out, "reg"); err != nil {
		t.Fatal(err)
	}
	readableRun(t, out)
	now := testenv.Tree(t, out)
	if now["theirs/x"] != "file theirs" {
		t.Errorf("theirs/x: %q, want it untouched", now["theirs/x"])
	}
	if _, ok := now["plots/a.png"]; ok {
		t.Errorf("plots/a.png, the earlier run's, is still there")
	}
}

// The user's file where the new run writes one of the same name is not
// lost: it stays, with what else of the earlier folder could not come
// across, in <name>.kept-<id>, and the run says so.
func TestRunFolderKeepsCollidingFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, _, err := fakeCommit(out, "reg"); err != nil {
		t.Fatal(err)
	}
	testenv.WriteTree(t, out, map[string]string{"unreg.hlog": "the user's", "notes.txt": "mine"})
	_, said, err := fakeCommit(out, "reg", "unreg")
	if err != nil {
		t.Fatal(err)
	}
	readableRun(t, out)
	kept, _ := filepath.Glob(out + ".kept-*")
	if len(kept) != 1 || len(said) != 1 || !strings.Contains(said[0], "unreg.hlog") || !strings.Contains(said[0], kept[0]) {
		t.Fatalf("kept %v, said %q", kept, said)
	}
	if data, _ := os.ReadFile(filepath.Join(kept[0], "unreg.hlog")); string(data) != "the user's" {
		t.Errorf("the user's unreg.hlog: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(data) != "mine" {
		t.Errorf("notes.txt: %q", data)
	}
}

// A folder an earlier xrcbench left half moved (killed while moving files
// one by one: the earlier run's files gone, part of the new one's in, the
// rest and result.json still in the temporary sibling) is refused no more:
// the next run completes the move, says so, and replaces it.
func TestRunFolderHalfMovedRecovered(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "run")
	id := "00000000000000aa"
	tmp := filepath.Join(base, ".run.tmp-"+id)
	testenv.WriteTree(t, out, map[string]string{"reg.hlog": "#xrcbench-run-id: " + id + "\n", "notes.txt": "mine"})
	testenv.WriteTree(t, tmp, map[string]string{"unreg.hlog": "#xrcbench-run-id: " + id + "\n"})
	results.Write(tmp, resultstest.Minimal(id, "reg.hlog", "unreg.hlog"))

	rf, err := Open(out, results.NewRunID())
	if err != nil {
		t.Fatalf("the folder is still refused: %v", err)
	}
	said := rf.recovered
	rf.Discard()
	if len(said) != 1 || !strings.Contains(said[0], "completed moving run "+id) {
		t.Errorf("said %q", said)
	}
	if r := readableRun(t, out); r.RunID != id {
		t.Errorf("the folder holds run %s, want %s", r.RunID, id)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Errorf("%s is still there", tmp)
	}
}

// SIGKILL at random moments of a run into a folder holding an earlier run,
// its user's files and links to outside (real processes: the test binary
// as commitChild, each step of the commit widened): after every kill,
// nothing outside has changed and the folder holds one whole run, the
// earlier or the new; the next run puts right what the killed one left,
// says so, and no file of the user's is lost.
func TestCommitKilled(t *testing.T) {
	tests := []struct {
		name     string
		kills    int
		exchange bool
	}{
		{"exchange", 40, true},
		{"no RENAME_EXCHANGE (NFS)", 20, false},
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			outside, out := filepath.Join(base, "outside"), filepath.Join(base, "runs", "run")
			testenv.WriteTree(t, outside, outsideFiles)
			before := testenv.Tree(t, outside)
			id, _, err := fakeCommit(out, "reg")
			if err != nil {
				t.Fatal(err)
			}
			plantLinks(t, out, outside, id)
			user := map[string]string{"notes.txt": "file mine", "plots/mine.svg": "file my plot", "mine/report.html": "file my page"}
			testenv.WriteTree(t, out, map[string]string{"notes.txt": "mine", "plots/mine.svg": "my plot", "mine/report.html": "my page"})

			// child runs one commit; kill > 0 kills it that long after its
			// commit's first step (fromStart: after it started), and
			// window is how long its commit took, first step to last.
			child := func(kill time.Duration, fromStart bool) (steps []string, killed bool, window time.Duration) {
				cmd := exec.Command(exe, "-test.run=^$")
				// GORACE: a -race binary otherwise sleeps a second on exit.
				cmd.Env = append(os.Environ(), commitEnv+"="+out, "XRCBENCH_TEST_COMMIT_STEP_MS=3", "GORACE=atexit_sleep_ms=0")
				if !tt.exchange {
					cmd.Env = append(cmd.Env, "XRCBENCH_TEST_NO_EXCHANGE=1")
				}
				stdout, _ := cmd.StdoutPipe()
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				arm := func() {
					if kill > 0 {
						timer := time.AfterFunc(kill, func() { cmd.Process.Signal(syscall.SIGKILL) })
						t.Cleanup(func() { timer.Stop() })
					}
				}
				if fromStart {
					arm()
				}
				var first time.Time
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					l := sc.Text()
					steps = append(steps, l)
					switch {
					case l == "step committed" && !first.IsZero():
						window = time.Since(first)
					case strings.HasPrefix(l, "step ") && first.IsZero():
						first = time.Now()
						if !fromStart {
							arm()
						}
					}
				}
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return steps, true, window
				}
				if err != nil {
					t.Fatalf("the run: %v\n%s\n%s", err, strings.Join(steps, "\n"), stderr.String())
				}
				return steps, false, window
			}
			// How long a whole run and its commit take, to kill within
			// them: most kills fall at a random moment of the commit (on a
			// busy machine, or under the race detector, a moment of the
			// whole run would rarely be one), every fourth at a random
			// moment of the whole run.
			start := time.Now()
			_, _, window := child(0, true)
			whole := time.Since(start)

			inCommit, recoveredSaid := 0, 0
			for i := range tt.kills {
				left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.[to]*-*"))
				kill, fromStart := time.Duration(1+rand.Int64N(int64(window))), false
				if i%4 == 0 {
					kill, fromStart = time.Duration(1+rand.Int64N(int64(whole))), true
				}
				steps, killed, _ := child(kill, fromStart)
				last := ""
				if len(steps) > 0 {
					last = steps[len(steps)-1]
				}
				if killed && strings.HasPrefix(last, "step ") && !slices.Contains([]string{"step opened", "step committed", "step done"}, last) {
					inCommit++ // between two steps of a commit (or of a recovery)
				}
				for _, s := range steps {
					if strings.HasPrefix(s, "note: ") {
						t.Log(s)
					}
				}
				if len(left) > 0 && slices.Contains(steps, "step opened") {
					if !slices.ContainsFunc(steps, func(s string) bool { return strings.HasPrefix(s, "note: ") }) {
						t.Errorf("kill %d: the run found %v beside the folder and said nothing of it", i, left)
					}
					recoveredSaid++
				}
				if after := testenv.Tree(t, outside); !maps.Equal(before, after) {
					t.Fatalf("kill %d (after %q): outside the folder changed:\nbefore %v\nafter  %v", i, last, before, after)
				}
				// Without RENAME_EXCHANGE the earlier run is renamed aside
				// before the new one goes in: killed between the two
				// renames, there is no run folder, but the earlier run is
				// whole beside it, for the next run to put back or finish.
				if _, err := os.Lstat(out); !tt.exchange && errors.Is(err, fs.ErrNotExist) {
					aside, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.old-*"))
					if len(aside) != 1 {
						t.Fatalf("kill %d (after %q): no run folder and %d earlier runs set aside\n%v", i, last, len(aside), testenv.Tree(t, filepath.Dir(out)))
					}
					readableRun(t, aside[0])
				} else {
					readableRun(t, out)
				}
				// The user's files are in the folder, or in the earlier
				// run's folder set aside, for the next run to carry across.
				for name, what := range user {
					if testenv.Tree(t, out)[name] != what && !setAside(t, out, name, what) {
						t.Fatalf("kill %d (after %q): the user's %s is gone\n%v", i, last, name, testenv.Tree(t, filepath.Dir(out)))
					}
				}
			}
			// The next run, not killed, settles what is left.
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.[to]*-*"))
			steps, _, _ := child(0, true)
			if len(left) > 0 && !slices.ContainsFunc(steps, func(s string) bool { return strings.HasPrefix(s, "note: ") }) {
				t.Errorf("the run after the kills found %v and said nothing of it", left)
			}
			readableRun(t, out)
			now := testenv.Tree(t, out)
			for name, what := range user {
				if now[name] != what {
					t.Errorf("the user's %s: %q, want %q", name, now[name], what)
				}
			}
			if now["link"] != "link to "+outside {
				t.Errorf("the user's link: %q", now["link"])
			}
			if after := testenv.Tree(t, outside); !maps.Equal(before, after) {
				t.Errorf("outside the folder changed:\nbefore %v\nafter  %v", before, after)
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
				t.Errorf("beside the folder: %v", ents)
			}
			t.Logf("%d kills, %d inside the commit; %d times the next run said what it recovered", tt.kills, inCommit, recoveredSaid)
			if inCommit < tt.kills/8 {
				t.Errorf("only %d of %d kills fell inside the commit: the test does not test it", inCommit, tt.kills)
			}
		})
	}
}

// setAside says whether the user's file name is in an earlier run's folder
// set aside beside out.
func setAside(t *testing.T, out, name, what string) bool {
	aside, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".run.[to]*-*"))
	for _, a := range aside {
		if testenv.Tree(t, a)[name] == what {
			return true
		}
	}
	return false
}

// Each state a commit killed outright can leave beside the folder is set
// right by the next run, which says what it did.
func TestRecoverKilledCommit(t *testing.T) {
	const id = "00000000000000bb" // the killed run
	earlierFiles := map[string]string{"reg.hlog": "#xrcbench-run-id: 1\n", "notes.txt": "mine"}
	newFiles := map[string]string{"reg.hlog": "#xrcbench-run-id: " + id + "\n"}
	tests := []struct {
		name string
		// What is there: the folder (nil: absent), and siblings by suffix.
		folder   map[string]string
		folderID string
		siblings map[string]string // ".run.tmp-<id>" or ".run.old-<id>" -> which run: "earlier", "new", "new, no result"
		wantRun  string
		wantSaid string
	}{
		{"exchanged, not yet set aside", newFiles, id, map[string]string{".run.tmp-" + id: "earlier"}, id, "finished replacing the earlier run"},
		{"set aside, not settled", newFiles, id, map[string]string{".run.old-" + id: "earlier"}, id, "finished replacing the earlier run"},
		{"no exchange: set aside, new complete", nil, "", map[string]string{".run.old-" + id: "earlier", ".run.tmp-" + id: "new"}, id, "put run " + id + " in place"},
		{"no exchange: set aside, new unfinished", nil, "", map[string]string{".run.old-" + id: "earlier", ".run.tmp-" + id: "new, no result"}, "1", "put the earlier run back"},
		{"killed before the commit", earlierFiles, "1", map[string]string{".run.tmp-" + id: "new"}, "1", "killed before it was put in place"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			out := filepath.Join(base, "run")
			if tt.folder != nil {
				testenv.WriteTree(t, out, tt.folder)
				results.Write(out, resultstest.Minimal(tt.folderID, "reg.hlog"))
			}
			for name, which := range tt.siblings {
				dir := filepath.Join(base, name)
				switch which {
				case "earlier":
					testenv.WriteTree(t, dir, earlierFiles)
					results.Write(dir, resultstest.Minimal("1", "reg.hlog"))
				case "new":
					testenv.WriteTree(t, dir, newFiles)
					results.Write(dir, resultstest.Minimal(id, "reg.hlog"))
				default:
					testenv.WriteTree(t, dir, newFiles)
				}
			}
			rf, err := Open(out, results.NewRunID())
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Join(rf.recovered, "\n")
			rf.Discard()
			if !strings.Contains(said, tt.wantSaid) {
				t.Errorf("said %q, want %q", said, tt.wantSaid)
			}
			if r := readableRun(t, out); r.RunID != tt.wantRun {
				t.Errorf("the folder holds run %s, want %s", r.RunID, tt.wantRun)
			}
			if data, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(data) != "mine" {
				t.Errorf("the user's notes.txt: %q\n%v", data, testenv.Tree(t, base))
			}
			if ents, _ := os.ReadDir(base); len(ents) != 1 {
				t.Errorf("beside the folder: %v", ents)
			}
		})
	}
}

// lockPidEnv makes the test binary a process that takes a run folder
// where no byte can be written (RLIMIT_FSIZE 0, as on a full disk or over
// quota) and prints what it was told.
const lockPidEnv = "XRCBENCH_TEST_LOCK_PID"

func lockPidChild(out string) {
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead of killing the process
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		fmt.Println("setrlimit:", err)
		return
	}
	rf, err := Open(out, "r1")
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	rf.Tell(false, os.Stdout)
	fmt.Println("holder:", lockHolder(rf.lockAt))
	if _, _, err := rf.parent.Lock(safedir.LockName("run")); !errors.Is(err, unix.EWOULDBLOCK) {
		fmt.Println("a second lock:", err)
	}
	rf.close()
	if unlock, err := Lock(out + "-q"); err != nil {
		fmt.Println("LockFolder:", err)
	} else {
		unlock()
	}
	fmt.Println("done")
}

// A lock whose pid cannot be written still holds, and the run says at
// its start that a second run will be refused naming no holder (a full
// disk then fails the run's writing as ever); LockFolder, before a long
// writer (qualify) starts, refuses the folder.
func TestLockFilePidNotWritten(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), lockPidEnv+"="+out)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, got)
	}
	lock := filepath.Join(filepath.Dir(out), ".run.lock")
	qlock := filepath.Join(filepath.Dir(out), ".run-q.lock")
	want := "warning: the lock " + lock + " holds, but this process's pid could not be written into it (write " + lock + ": file too large): a second run into the folder is refused naming no holder\nholder: unknown\n" +
		"LockFolder: locking " + out + "-q: the lock " + qlock + " holds, but this process's pid could not be written into it (write " + qlock + ": file too large): a second run into the folder is refused naming no holder\ndone\n"
	if string(got) != want {
		t.Fatalf("a run folder under RLIMIT_FSIZE 0:\n%s\nwant:\n%s", got, want)
	}
}
