package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/results"
)

// The run folder rules (README, "Run folders"):
//
//   - A folder is a run folder, ours to replace, when its result.json has
//     our schema and a run id. --out on a folder that is neither absent,
//     empty nor a run folder is refused.
//   - A run locks its folder for its whole life with flock(2) on a sibling
//     file, .<name>.lock, holding the coordinator's pid: a second run into
//     the same folder is refused at once, naming that pid.
//   - A run writes into a temporary sibling, .<name>.tmp-<run id>, and puts
//     it in place at the end: a new folder is renamed into place whole; an
//     earlier run's folder loses the files that run (and `report` on it)
//     wrote, then receives the new files, result.json last. A reader sees
//     the earlier run, or no result.json, or the new run: never a mix.
//   - A coordinator killed outright leaves the earlier run intact and a
//     temporary sibling, which the next run into that folder removes.

// ErrOutFolder is matched by the errors about --out itself: a folder that is
// not ours, or one another run is writing. They are bad input (exit 2).
var ErrOutFolder = errors.New("output folder refused")

type outFolderError struct{ msg string }

func (e *outFolderError) Error() string        { return e.msg }
func (e *outFolderError) Is(target error) bool { return target == ErrOutFolder }

func outFolderErrorf(format string, args ...any) error {
	return &outFolderError{fmt.Sprintf(format, args...)}
}

// NotWrittenError is a run whose folder could not be written (a full disk):
// the measurement happened, its summary was printed, but the files say
// what was and was not written.
type NotWrittenError struct {
	Out string
	Err error
	// Written lists what did reach the folder; empty when nothing did.
	Written []string
	// Kept says what became of what was there before.
	Kept string
}

func (e *NotWrittenError) Error() string {
	what := "nothing written"
	if len(e.Written) > 0 {
		what = "only " + strings.Join(e.Written, ", ") + " written"
	}
	return fmt.Sprintf("%s to %s: %v; %s", what, e.Out, e.Err, e.Kept)
}
func (e *NotWrittenError) Unwrap() error { return e.Err }

// runFolder is a run's output folder while it is written.
type runFolder struct {
	final   string // where the run goes: Config.Out
	tmp     string // where it is written meanwhile
	lock    *os.File
	lockAt  string
	earlier *results.Result // the run being replaced, if any
}

// openRunFolder locks out, checks it may be written, and makes the
// temporary sibling the run writes into.
func openRunFolder(out, runID string) (*runFolder, error) {
	clean := filepath.Clean(out)
	parent, name := filepath.Split(clean)
	if parent == "" {
		parent = "."
	}
	if name == "" || name == "." || name == ".." || clean == "/" {
		return nil, outFolderErrorf("--out %s: name a folder of its own, such as runs/mine", out)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	rf := &runFolder{final: clean, lockAt: filepath.Join(parent, "."+name+".lock")}
	lock, err := lockFile(rf.lockAt)
	if err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, outFolderErrorf("--out %s: another run is writing it (xrcbench pid %s, holding %s)", out, lockHolder(rf.lockAt), rf.lockAt)
		}
		return nil, fmt.Errorf("locking the output folder: %w", err)
	}
	rf.lock = lock
	fail := func(err error) (*runFolder, error) {
		rf.unlock()
		return nil, err
	}
	if rf.earlier, err = inspectOut(clean); err != nil {
		return fail(err)
	}
	// Temporary siblings of this folder left by a killed run: ours (we hold
	// the lock, no other run is writing them).
	if stale, _ := filepath.Glob(filepath.Join(parent, "."+globEscape(name)+".tmp-*")); len(stale) > 0 {
		for _, s := range stale {
			if st, err := os.Lstat(s); err == nil && st.IsDir() && ownedByUs(st) {
				os.RemoveAll(s)
			}
		}
	}
	rf.tmp = filepath.Join(parent, "."+name+".tmp-"+runID)
	if err := os.Mkdir(rf.tmp, 0o755); err != nil {
		return fail(fmt.Errorf("output folder: %w", err))
	}
	return rf, nil
}

// inspectOut says whether out may be written: absent, empty, or a run
// folder (returned, to be replaced).
func inspectOut(out string) (*results.Result, error) {
	st, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		if st, err = os.Stat(out); err != nil {
			return nil, outFolderErrorf("--out %s: a symbolic link to nothing usable (%v)", out, err)
		}
	}
	if !st.IsDir() {
		return nil, outFolderErrorf("--out %s: not a folder", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if len(ents) == 0 {
		return nil, nil
	}
	r, err := results.Load(out)
	if err != nil || r.RunID == "" {
		return nil, outFolderErrorf("--out %s: not empty and not an xrcbench run folder (no %s with a run id): give a new or empty folder; nothing was changed", out, results.FileName)
	}
	return r, nil
}

// dir is where the run writes meanwhile.
func (rf *runFolder) dir() string { return rf.tmp }

// commit puts the written folder in place; files are the names written
// (result.json among them). The lock is released.
func (rf *runFolder) commit(files []string) error {
	defer rf.unlock()
	earlier, err := inspectOut(rf.final)
	if err != nil {
		// Someone filled the folder meanwhile: leave the run where it is.
		return fmt.Errorf("%w; the run stays in %s", err, rf.tmp)
	}
	if earlier == nil {
		// Absent or empty: the whole folder goes in at once (rename(2)
		// replaces an empty folder).
		if err := os.Rename(rf.tmp, rf.final); err == nil {
			return nil
		}
		if err := os.MkdirAll(rf.final, 0o755); err != nil {
			return err
		}
	} else {
		removeRunFiles(rf.final, earlier)
	}
	// result.json last: until it is there the folder is no run at all.
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b string) int {
		return boolInt(a == results.FileName) - boolInt(b == results.FileName)
	})
	for _, name := range order {
		if err := os.Rename(filepath.Join(rf.tmp, name), filepath.Join(rf.final, name)); err != nil {
			return fmt.Errorf("moving %s into %s: %w; the rest of the run stays in %s", name, rf.final, err, rf.tmp)
		}
	}
	return os.Remove(rf.tmp)
}

// discard removes the temporary folder (nothing of it is kept) and
// releases the lock.
func (rf *runFolder) discard() {
	os.RemoveAll(rf.tmp)
	rf.unlock()
}

func (rf *runFolder) unlock() {
	if rf.lock == nil {
		return
	}
	// Removed while still held: a run that opened it meanwhile finds, once
	// it gets the lock, that the path no longer names its file, and
	// starts over (lockFile).
	os.Remove(rf.lockAt)
	rf.lock.Close()
	rf.lock = nil
}

// removeRunFiles removes from dir what the run r wrote there and what
// `report` wrote for it, by their own lists; nothing else. result.json
// goes first, so a reader never takes the rest for a complete run.
func removeRunFiles(dir string, r *results.Result) {
	os.Remove(filepath.Join(dir, results.FileName))
	for _, name := range r.Files {
		if results.LocalName(name) {
			os.Remove(filepath.Join(dir, name))
		}
	}
	if m, err := results.LoadManifest(dir); err == nil && m.RunID == r.RunID {
		dirs := map[string]bool{}
		for _, name := range m.Files {
			if results.LocalName(name) {
				os.Remove(filepath.Join(dir, name))
				for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
					dirs[d] = true
				}
			}
		}
		// Folders the report made go too, if nothing else is in them.
		ds := slices.Sorted(func(yield func(string) bool) {
			for d := range dirs {
				if !yield(d) {
					return
				}
			}
		})
		for i := len(ds) - 1; i >= 0; i-- {
			os.Remove(filepath.Join(dir, ds[i])) // fails when not empty: kept
		}
	}
	os.Remove(filepath.Join(dir, results.ReportManifest))
}

// lockFile takes an exclusive flock on path, created if need be, without
// waiting, and writes this process's pid into it.
func lockFile(path string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		// The holder before us may have removed the file between our open
		// and our lock: then we hold a lock on nothing anyone else sees.
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return f, nil
		}
		f.Close()
		if attempt > 10 {
			return nil, fmt.Errorf("%s keeps being replaced", path)
		}
	}
}

// lockHolder is the pid written in a lock file, or "unknown".
func lockHolder(path string) string {
	data, err := regfile.ReadFile(path, 64)
	if err != nil {
		return "unknown"
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
		return strconv.Itoa(pid)
	}
	return "unknown"
}

// ownedByUs says whether st is owned by the current user.
func ownedByUs(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
