package runfolder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/safedir"
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
//     it in place at the end with one rename: a new folder is renamed into
//     place whole; over an earlier run the two folders are exchanged, and
//     the earlier one, set aside, gives the user's files across and loses
//     its own (commit). A reader sees the earlier run or the new one.
//   - Nothing inside a run folder is reached through a symbolic link, and
//     a folder of another user's is refused (internal/safedir).
//   - Every file of a run is made beneath a handle of the temporary folder,
//     which the run made and opened itself, and every rename goes through
//     the parent's handle after checking that the entry renamed is that
//     folder: whoever else can write the parent can move the folder or put
//     a link in its place, but never steer a write. Root refuses a parent
//     in which another user can do even that (safedir.CheckParent).
//   - A coordinator killed outright leaves one whole run in place and
//     siblings that the next run into that folder settles (recover).

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

// Folder is a run's output folder while it is written. Every rename and
// removal goes through parent, the folder holding it, opened once, and
// through safedir handles below it: no symbolic link inside a run folder
// is ever followed, and a folder not ours is left alone.
type Folder struct {
	given   string // --out as given, for messages
	final   string // where the run goes: Config.Out, cleaned
	name    string // its last component
	runID   string
	parent  *safedir.Dir
	tmpName string       // the temporary sibling's name in parent
	tmp     string       // and its path, for messages
	tmpDir  *safedir.Dir // and the folder itself, where the run writes meanwhile
	lock    *safedir.FileLock
	lockAt  string          // the lock's path, for messages
	earlier *results.Result // the run being replaced, if any
	// recovered says what a killed commit had left and this run set right,
	// a line each, for the run to print; warnings what went wrong in
	// taking the folder that does not stop the run.
	recovered, warnings []string
}

// Sibling name prefixes: .<name>.tmp-<run id> is a run being written (or,
// holding another run's result, the earlier run a killed commit had just
// swapped out); .<name>.old-<run id> is the earlier run that run <run id>
// replaced, whose user files are still to be carried across.
func tmpPrefix(name string) string { return "." + name + ".tmp-" }
func oldPrefix(name string) string { return "." + name + ".old-" }

// Open locks out, sets right what a killed commit left there,
// checks it may be written, and makes the temporary sibling the run writes
// into.
func Open(out, runID string) (*Folder, error) {
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
	pd, err := safedir.OpenParent(filepath.Clean(parent))
	var refused *safedir.RefusedError
	if errors.As(err, &refused) {
		return nil, outFolderErrorf("--out %s: its folder %s: %s; nothing was changed", out, refused.Path, refused.Reason)
	}
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	rf := &Folder{given: out, final: clean, name: name, runID: runID, parent: pd,
		lockAt: filepath.Join(parent, safedir.LockName(name))}
	lock, pidErr, err := pd.Lock(safedir.LockName(name))
	if pidErr != nil {
		// A file system that cannot take these few bytes will likely not
		// take the result either; the run says so at the start, and the
		// end says what was not written, as on any full disk.
		rf.warnings = append(rf.warnings, pidErr.Error())
	}
	if err != nil {
		defer pd.Close()
		if safedir.IsBusy(err) {
			return nil, outFolderErrorf("--out %s: another xrcbench is writing it (a run, or a report into it: pid %s, holding %s)", out, pd.Holder(safedir.LockName(name)), rf.lockAt)
		}
		if errors.As(err, &refused) {
			return nil, outFolderErrorf("--out %s: the lock %s: %s; nothing was changed", out, refused.Path, refused.Reason)
		}
		return nil, fmt.Errorf("locking the output folder: %w", err)
	}
	rf.lock = lock
	fail := func(err error) (*Folder, error) {
		rf.close()
		return nil, err
	}
	// Siblings left by a killed run are ours to settle: we hold the lock.
	rf.recover()
	if rf.earlier, err = rf.inspect(); err != nil {
		return fail(err)
	}
	rf.tmpName = tmpPrefix(name) + runID
	rf.tmp = filepath.Join(parent, rf.tmpName)
	if rf.tmpDir, err = pd.Mkdir(rf.tmpName, 0o755); err != nil {
		return fail(fmt.Errorf("output folder: %w", err))
	}
	return rf, nil
}

// inspect says whether the folder may be written: absent, empty, or a run
// folder (returned, to be replaced). A symbolic link, another user's
// folder, or (for root) one other users can write, is refused.
func (rf *Folder) inspect() (*results.Result, error) {
	out := rf.given
	st, err := rf.parent.Lstat(rf.name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		to, _ := os.Readlink(rf.final)
		return nil, outFolderErrorf("--out %s: a symbolic link (to %s): give the folder itself; nothing was changed", out, to)
	}
	d, err := rf.parent.Sub(rf.name)
	var refused *safedir.RefusedError
	if errors.As(err, &refused) {
		return nil, outFolderErrorf("--out %s: %s; nothing was changed", out, refused.Reason)
	}
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	defer d.Close()
	ents, err := d.ReadDir()
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if len(ents) == 0 {
		return nil, nil
	}
	r, err := results.Load(rf.final)
	if err != nil || r.RunID == "" {
		return nil, outFolderErrorf("--out %s: not empty and not an xrcbench run folder (no %s with a run id): give a new or empty folder; nothing was changed", out, results.FileName)
	}
	return r, nil
}

// dir is the path of where the run writes meanwhile, for tests: the run
// itself writes beneath rf.tmpDir.
func (rf *Folder) dir() string { return rf.tmp }

// TmpDir is the temporary folder the run writes its files beneath until
// Write puts it in place.
func (rf *Folder) TmpDir() *safedir.Dir { return rf.tmpDir }

// errSwapped is a run folder someone else renamed or replaced while the
// run wrote it: whoever can write its parent can, and the run then puts
// nothing in place.
func (rf *Folder) errSwapped(what string) error {
	return &swappedError{fmt.Sprintf("%s is no longer the folder this run made (another user who can write %s %s): the run is not put in place", rf.tmp, rf.parentPath(), what)}
}

// swappedError is a commit that put nothing in place: the run folder is
// as it was.
type swappedError struct{ msg string }

func (e *swappedError) Error() string { return e.msg }

// CommitStep, when set (by tests), runs between the steps of a commit, to
// widen the windows a kill can fall into.
var CommitStep func(step string)

func step(name string) {
	if CommitStep != nil {
		CommitStep(name)
	}
}

// renameExchange swaps two entries of a folder at once; a variable so that
// tests can take the way of a file system without RENAME_EXCHANGE.
var renameExchange = func(dirfd int, a, b string) error {
	return unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
}

// commit puts the written folder in place; files are the names written
// (result.json among them). The lock is released.
//
// The switch is one rename: onto an absent or empty folder, the new folder
// is renamed over it; onto an earlier run, the two folders are exchanged
// (RENAME_EXCHANGE), so a reader, and a kill, finds the earlier run whole
// or the new one whole. The earlier run's folder, swapped out to
// .<name>.old-<run id>, then gives its user files back to the new one and
// loses what was ours. Where the file system cannot exchange (NFS), the
// earlier folder is renamed aside first, and for an instant there is no
// run folder. A run killed at any point leaves siblings that recover, in
// the next run into the folder, settles.
func (rf *Folder) commit(files []string) error {
	defer rf.close()
	earlier, err := rf.inspect()
	if err != nil {
		// Someone filled the folder meanwhile: leave the run where it is.
		return fmt.Errorf("%w; the run stays in %s", err, rf.tmp)
	}
	p := rf.parent.Fd()
	// What is renamed must be the folder the run made and wrote: a link
	// put in its place would become the run folder.
	if !rf.tmpDir.IsEntry(rf.parent, rf.tmpName) {
		return rf.errSwapped("moved it away")
	}
	if earlier == nil {
		// Absent or empty: the whole folder goes in at once (rename(2)
		// replaces an empty folder).
		step("rename")
		if err := unix.Renameat(p, rf.tmpName, p, rf.name); err == nil {
			return rf.checkInPlace()
		}
		// An empty folder rename cannot replace (a mount point): there is
		// no earlier run to lose, so the files go in one by one.
		return rf.moveFiles(rf.tmpDir, files)
	}
	oldName := oldPrefix(rf.name) + rf.runID
	step("exchange")
	if err := renameExchange(p, rf.tmpName, rf.name); err == nil {
		step("exchanged")
		if err := rf.checkInPlace(); err != nil {
			return err
		}
		if err := unix.Renameat(p, rf.tmpName, p, oldName); err != nil {
			return fmt.Errorf("setting aside the earlier run (now %s): %w", rf.tmp, err)
		}
	} else if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		if err := unix.Renameat(p, rf.name, p, oldName); err != nil {
			return fmt.Errorf("setting aside the earlier run in %s: %w; the earlier run is unchanged, the new one stays in %s", rf.final, err, rf.tmp)
		}
		step("set aside")
		if err := unix.Renameat(p, rf.tmpName, p, rf.name); err != nil {
			unix.Renameat(p, oldName, p, rf.name)
			return fmt.Errorf("moving the run into %s: %w; it stays in %s", rf.final, err, rf.tmp)
		}
	} else {
		return fmt.Errorf("moving the run into %s: %w; the earlier run is unchanged, the new one stays in %s", rf.final, err, rf.tmp)
	}
	step("in place")
	if err := rf.checkInPlace(); err != nil {
		return err
	}
	if kept := rf.finishOld(oldName); kept != "" {
		rf.recovered = append(rf.recovered, kept)
	}
	return nil
}

// Write writes result.json and moves the run into out. Once
// result.json is written the run folder is committed: it is no longer to
// be discarded, even when the move fails. A failure says what was kept of
// an earlier run.
func (rf *Folder) Write(res *results.Result, out string) (committed bool, err error) {
	kept := fmt.Sprintf("%s was not created", out)
	if rf.earlier != nil {
		kept = fmt.Sprintf("the earlier run in %s is unchanged", out)
	}
	if err := results.WriteIn(rf.tmpDir, res); err != nil {
		return false, &NotWrittenError{Out: out, Err: fmt.Errorf("writing %s: %w", results.FileName, err), Kept: kept}
	}
	if err := rf.commit(res.Files); err != nil {
		if errors.As(err, new(*swappedError)) {
			return true, &NotWrittenError{Out: out, Err: err, Kept: kept}
		}
		return true, &NotWrittenError{Out: out, Err: err, Kept: "the folder may hold part of the run"}
	}
	return true, nil
}

// checkInPlace says whether the run folder is now the folder the run
// made: the check before the rename and the rename are two calls, and
// another user who can write the parent could swap a link in between.
func (rf *Folder) checkInPlace() error {
	if rf.tmpDir.IsEntry(rf.parent, rf.name) {
		return nil
	}
	// A link there would be taken for the run folder by whoever reads it:
	// removed (the link itself; nothing is followed).
	if st, err := rf.parent.Lstat(rf.name); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Unlinkat(rf.parent.Fd(), rf.name, 0)
	}
	return fmt.Errorf("%s is not the folder this run made (another user who can write %s swapped it while the run was put in place): look at it before trusting it; the run's files are not there", rf.final, rf.parentPath())
}

// moveFiles moves the run's files from src, a temporary sibling, into the
// folder, result.json last: until it is there the folder is no run at all.
func (rf *Folder) moveFiles(src *safedir.Dir, files []string) error {
	dst, err := rf.parent.MkdirAll(rf.name, 0o755)
	if err != nil {
		return fmt.Errorf("%w; the run stays in %s", err, rf.tmp)
	}
	defer dst.Close()
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b string) int {
		return boolInt(a == results.FileName) - boolInt(b == results.FileName)
	})
	for _, name := range order {
		if !results.LocalName(name) || strings.Contains(name, "/") {
			continue
		}
		if err := unix.Renameat(src.Fd(), name, dst.Fd(), name); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("moving %s into %s: %w; the rest of the run stays in %s", name, rf.final, err, rf.tmp)
		}
		step("moved " + name)
	}
	if !src.IsEntry(rf.parent, rf.tmpName) {
		return nil // moved away meanwhile: not ours to remove
	}
	return unix.Unlinkat(rf.parent.Fd(), rf.tmpName, unix.AT_REMOVEDIR)
}

// finishOld settles oldName, an earlier run's folder swapped out of the
// way: what in it is not that run's (nor report's for it) goes across into
// the run folder, what is goes, and so does the emptied folder. What
// cannot go across (a file of the user's where the new run has one of
// that name) stays, with the folder, renamed <name>.kept-<run id> in
// sight; the returned line says so, "" when all went well.
//
// Each step may be cut short by a kill and done again: result.json goes
// last, so while it is there the folder's own lists say what is ours.
func (rf *Folder) finishOld(oldName string) string {
	old, err := rf.parent.Sub(oldName)
	if err != nil {
		return fmt.Sprintf("left %s alone: %v", filepath.Join(rf.parentPath(), oldName), err)
	}
	defer old.Close()
	r, _ := results.Load(filepath.Join(rf.parentPath(), oldName))
	var m *results.Manifest
	if r != nil {
		if mm, err := results.LoadManifest(filepath.Join(rf.parentPath(), oldName)); err == nil && mm.RunID == r.RunID {
			m = mm
		}
	}
	ours := runFiles(r, m)
	if dst, err := rf.parent.Sub(rf.name); err == nil {
		carry(old, dst, ".", ours)
		dst.Close()
	}
	step("carried")
	removeRunFiles(old, r, m)
	step("removed")
	if unix.Unlinkat(rf.parent.Fd(), oldName, unix.AT_REMOVEDIR) == nil {
		return ""
	}
	left, _ := old.ReadDir()
	kept := rf.name + ".kept-" + strings.TrimPrefix(oldName, oldPrefix(rf.name))
	if err := unix.Renameat(rf.parent.Fd(), oldName, rf.parent.Fd(), kept); err != nil {
		kept = oldName
	}
	return fmt.Sprintf("kept %s in %s: files of yours beside the earlier run that the new run could not take in (a file of its own has the name)",
		strings.Join(left, ", "), filepath.Join(rf.parentPath(), kept))
}

func (rf *Folder) parentPath() string { return rf.parent.Path() }

// runFiles is every name of the run r in its folder (r's files, report's
// record m, and the two lists themselves), and every folder on their way
// (mapped to false).
func runFiles(r *results.Result, m *results.Manifest) map[string]bool {
	ours := map[string]bool{}
	if r == nil {
		return ours
	}
	add := func(name string) {
		if !results.LocalName(name) {
			return
		}
		ours[name] = true
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			if !ours[d] {
				ours[d] = false
			}
		}
	}
	add(results.FileName)
	add(results.ReportManifest)
	for _, n := range r.Files {
		add(n)
	}
	if m != nil {
		for _, n := range m.Files {
			add(n)
		}
	}
	return ours
}

// carry moves what in from's folder rel is not ours into to's: a folder on
// the way to ours is gone into, anything else (a file, a folder, a
// symbolic link, as it is) moves whole. Nothing moves over a name to
// already has.
func carry(from, to *safedir.Dir, rel string, ours map[string]bool) {
	names, err := from.ReadDir()
	if err != nil {
		return
	}
	for _, n := range names {
		path := filepath.Join(rel, n)
		own, onTheWay := ours[path]
		if own {
			continue
		}
		if onTheWay {
			if sub, err := from.Sub(n); err == nil {
				if dst, err := to.MkdirAll(n, 0o755); err == nil {
					carry(sub, dst, path, ours)
					dst.Close()
				}
				sub.Close()
				continue
			}
			// Not a folder of ours (a link, another user's): the user's.
		}
		step("carry " + path)
		err := unix.Renameat2(from.Fd(), n, to.Fd(), n, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EINVAL) {
			// No RENAME_NOREPLACE here (NFS): we hold the lock, and
			// nothing else writes the new folder yet.
			if _, err := to.Lstat(n); errors.Is(err, fs.ErrNotExist) {
				unix.Renameat(from.Fd(), n, to.Fd(), n)
			}
		}
	}
}

// removeRunFiles removes from dir what the run r wrote there and what
// `report` wrote for it (m, when it is r's), by their own lists; nothing
// else, and nothing through a symbolic link. result.json goes last, so
// that while it is there the lists still say what is ours.
func removeRunFiles(dir *safedir.Dir, r *results.Result, m *results.Manifest) {
	if r == nil {
		return
	}
	for _, name := range r.Files {
		if results.LocalName(name) && name != results.FileName {
			dir.Remove(name)
			step("removed " + name)
		}
	}
	if m != nil {
		dirs := map[string]bool{}
		for _, name := range m.Files {
			if results.LocalName(name) {
				dir.Remove(name)
				for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
					dirs[d] = true
				}
			}
		}
		// Folders the report made go too, if nothing else is in them.
		ds := slices.Sorted(maps.Keys(dirs))
		for i := len(ds) - 1; i >= 0; i-- {
			dir.RemoveDir(ds[i]) // fails when not empty, or not a folder of ours: kept
		}
	}
	dir.Remove(results.ReportManifest)
	dir.Remove(results.FileName)
}

// recover settles what a run into this folder killed outright left
// beside it, and notes each in rf.recovered:
//
//   - .<name>.tmp-<id> holding another run's result: the earlier run,
//     just swapped out by run <id>'s commit; it is set aside as .old-<id>
//     and settled below.
//   - .<name>.tmp-<id> holding run <id>'s result while the folder holds
//     no run, part of run <id>'s files in it (an earlier xrcbench moved
//     files one by one, and was killed halfway): the move is completed.
//   - any other .<name>.tmp-<id>: a run killed before it was put in place;
//     removed, as it holds only what that run wrote.
//   - .<name>.old-<id>: an earlier run set aside by run <id>. With no run
//     folder (killed between the two renames where the file system cannot
//     exchange), run <id> goes in place if it was complete, else the
//     earlier run goes back; then it is settled as a commit settles it.
func (rf *Folder) recover() {
	names, err := rf.parent.ReadDir()
	if err != nil {
		return
	}
	slices.Sort(names)
	say := func(format string, args ...any) {
		rf.recovered = append(rf.recovered, fmt.Sprintf(format, args...))
	}
	at := func(n string) string { return filepath.Join(rf.parentPath(), n) }
	p := rf.parent.Fd()
	for _, n := range names {
		id, ok := strings.CutPrefix(n, tmpPrefix(rf.name))
		if !ok || !rf.ours(n) || slices.Contains(names, oldPrefix(rf.name)+id) {
			continue // not ours; or settled with its .old- sibling, below
		}
		r, _ := results.Load(at(n))
		switch {
		case r != nil && r.RunID != id:
			if unix.Renameat(p, n, p, oldPrefix(rf.name)+id) != nil {
				say("left %s alone: it holds run %s, and could not be set aside", at(n), r.RunID)
				continue
			}
			names = append(names, oldPrefix(rf.name)+id)
		case r != nil && rf.halfMoved(n, r):
			if err := rf.completeMove(n, r); err != nil {
				say("could not complete moving run %s from %s into %s: %v", id, at(n), rf.final, err)
				continue
			}
			say("completed moving run %s into %s, which a killed run had left half done", id, rf.final)
		default:
			rf.parent.RemoveAll(n)
			say("removed %s, left by run %s killed before it was put in place", at(n), id)
		}
	}
	for _, n := range names {
		id, ok := strings.CutPrefix(n, oldPrefix(rf.name))
		if !ok || !rf.ours(n) {
			continue
		}
		if _, err := rf.parent.Lstat(rf.name); errors.Is(err, fs.ErrNotExist) {
			tmp := tmpPrefix(rf.name) + id
			if r, err := results.Load(at(tmp)); err == nil && r.RunID == id && rf.ours(tmp) && unix.Renameat(p, tmp, p, rf.name) == nil {
				say("put run %s in place in %s: it was killed while putting itself there", id, rf.final)
			} else {
				if unix.Renameat(p, n, p, rf.name) == nil {
					say("put the earlier run back in %s: run %s was killed while replacing it", rf.final, id)
					if rf.ours(tmp) {
						rf.parent.RemoveAll(tmp) // what run <id> wrote: unfinished
					}
				}
				continue
			}
		}
		line := fmt.Sprintf("finished replacing the earlier run in %s (run %s was killed while doing it): your files in it carried across", rf.final, id)
		if kept := rf.finishOld(n); kept != "" {
			line += "; " + kept
		}
		say("%s", line)
	}
}

// Tell prints on stderr what the folder needed set right, once, unless
// quiet.
func (rf *Folder) Tell(quiet bool, stderr io.Writer) {
	if !quiet {
		for _, l := range rf.recovered {
			fmt.Fprintln(stderr, "note: "+l)
		}
		for _, l := range rf.warnings {
			fmt.Fprintln(stderr, "warning: "+l)
		}
	}
	rf.recovered, rf.warnings = nil, nil
}

// ours says whether the sibling n is a real folder of the current user.
func (rf *Folder) ours(n string) bool {
	st, err := rf.parent.Lstat(n)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == os.Getuid()
}

// halfMoved says whether the folder holds no run and part of the complete
// run r, whose temporary sibling tmp holds the rest.
func (rf *Folder) halfMoved(tmp string, r *results.Result) bool {
	dst, err := rf.parent.Sub(rf.name)
	if err != nil {
		return false
	}
	defer dst.Close()
	if _, err := dst.Lstat(results.FileName); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	src, err := rf.parent.Sub(tmp)
	if err != nil {
		return false
	}
	defer src.Close()
	moved := 0
	for _, name := range r.Files {
		if _, err := src.Lstat(name); err == nil {
			continue
		}
		if _, err := dst.Lstat(name); err != nil {
			return false // lost: not a run to complete
		}
		moved++
	}
	return moved > 0
}

// completeMove moves what is left of run r in tmp into the folder,
// result.json last.
func (rf *Folder) completeMove(tmp string, r *results.Result) error {
	src, err := rf.parent.Sub(tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	saved := rf.tmpName
	rf.tmpName = tmp
	defer func() { rf.tmpName = saved }()
	return rf.moveFiles(src, r.Files)
}

// Discard removes the temporary folder (nothing of it is kept) and
// releases the lock. What it holds is removed through its handle; the
// folder itself only while it is still the entry the run made.
func (rf *Folder) Discard() {
	if rf.tmpDir != nil {
		rf.tmpDir.Clear()
		if rf.tmpDir.IsEntry(rf.parent, rf.tmpName) {
			unix.Unlinkat(rf.parent.Fd(), rf.tmpName, unix.AT_REMOVEDIR)
		}
	}
	rf.close()
}

// close releases the lock and the handles.
func (rf *Folder) close() {
	rf.unlock()
	if rf.tmpDir != nil {
		rf.tmpDir.Close()
		rf.tmpDir = nil
	}
	if rf.parent != nil {
		rf.parent.Close()
		rf.parent = nil
	}
}

func (rf *Folder) unlock() {
	if rf.lock == nil {
		return
	}
	rf.lock.Unlock()
	rf.lock = nil
}

// Lock locks dir for the caller's life as a run locks its --out:
// flock(2) on the sibling .<name>.lock, holding the pid. A folder another
// xrcbench holds is refused at once (ErrOutFolder), naming its pid. Other
// commands that write a folder over a long time (qualify) take it too, so
// two of them never write one folder.
func Lock(dir string) (unlock func(), err error) {
	clean := filepath.Clean(dir)
	parent, name := filepath.Split(clean)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	pd, err := safedir.OpenUnchecked(parent)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	at := filepath.Join(parent, safedir.LockName(name))
	l, pidErr, err := pd.Lock(safedir.LockName(name))
	if safedir.IsBusy(err) {
		holder := pd.Holder(safedir.LockName(name))
		pd.Close()
		return nil, outFolderErrorf("%s: another xrcbench is writing it (pid %s, holding %s)", dir, holder, at)
	}
	if err != nil {
		pd.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if pidErr != nil {
		// Before anything is written into dir: a folder whose file
		// system cannot take a pid will not take what the caller writes
		// there over its long life either.
		l.Unlock()
		pd.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, pidErr)
	}
	return func() {
		l.Unlock()
		pd.Close()
	}, nil
}

// lockHolder is the pid written in the lock file at path, or "unknown".
func lockHolder(path string) string {
	d, err := safedir.OpenUnchecked(filepath.Dir(path))
	if err != nil {
		return "unknown"
	}
	defer d.Close()
	return d.Holder(filepath.Base(path))
}

// ownedByUs says whether st is owned by the current user.
func ownedByUs(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
