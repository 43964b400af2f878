// Package fleet is what a fleet run (run --fleet) needs beside the
// engine: a node's identity from the cluster launcher's environment, and
// the barrier at which the nodes meet on the shared output folder
// (--fleet-sync). It knows nothing of the engine: cmd/xrcbench hands the
// barrier to a run as its Options.BeforeStart.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/results"
)

// A fleet run is one xrcbench run per node, started by the cluster's own
// launcher (srun, mpirun -npernode 1): xrcbench never starts anything on
// another machine. Each node finds out who it is from the launcher's
// environment and writes its run folder under <out>/<node>/.

// errFleet is matched by the errors about a fleet's environment: no
// launcher, a node name unfit for a folder, a second task on a node. They
// are bad usage (exit 2).
var errFleet = errors.New("fleet refused")

type fleetError struct{ msg string }

func (e *fleetError) Error() string        { return e.msg }
func (e *fleetError) Is(target error) bool { return target == errFleet }

func fleetErrorf(format string, args ...any) error {
	return &fleetError{fmt.Sprintf(format, args...)}
}

// nodeName is what a node's folder may be called: a host name, never a path.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$`)

// Identity reads the launcher's environment: Slurm (SLURM_JOB_ID,
// SLURM_PROCID, SLURM_NNODES, SLURMD_NODENAME, SLURM_LOCALID and the
// node list, SLURM_JOB_NODELIST), Open MPI
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE) or PMIx
// (PMIX_RANK, PMIX_NAMESPACE), in that order; the node is named by the
// launcher, or else by hostname. A task that is not the first on its node
// is refused: XRC registration is node-local, and two runs on one device
// would measure each other. A fleet of more than results.MaxFleetNodes
// nodes is refused.
func Identity(getenv func(string) string, hostname string) (*results.Fleet, error) {
	num := func(name string) (int, bool, error) {
		v := getenv(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, fleetErrorf("--fleet: %s=%q: want a number", name, trimName(v))
		}
		return n, true, nil
	}
	// count is a node count: a few bytes of environment must not size
	// what a node holds or writes for each node of the fleet.
	count := func(name string) (int, bool, error) {
		n, ok, err := num(name)
		if err == nil && n > results.MaxFleetNodes {
			return 0, false, fleetErrorf("--fleet: %s=%d: more than the %d nodes a fleet may have", name, n, results.MaxFleetNodes)
		}
		return n, ok, err
	}
	var f results.Fleet
	var local int
	var err error
	var ok bool
	switch {
	case getenv("SLURM_JOB_ID") != "" && getenv("SLURM_PROCID") != "":
		f.Launcher, f.JobID, f.Node = "slurm", getenv("SLURM_JOB_ID"), getenv("SLURMD_NODENAME")
		f.StepID = getenv("SLURM_STEP_ID")
		if f.Rank, _, err = num("SLURM_PROCID"); err != nil {
			return nil, err
		}
		if f.Nodes, ok, err = count("SLURM_NNODES"); err != nil {
			return nil, err
		} else if !ok {
			if f.Nodes, _, err = count("SLURM_JOB_NUM_NODES"); err != nil {
				return nil, err
			}
		}
		if local, _, err = num("SLURM_LOCALID"); err != nil {
			return nil, err
		}
		if f.NodeList, err = expandHostlist(getenv("SLURM_JOB_NODELIST")); err != nil {
			return nil, err
		}
	case getenv("OMPI_COMM_WORLD_RANK") != "":
		f.Launcher = "openmpi"
		f.JobID = getenv("OMPI_MCA_ess_base_jobid")
		if f.JobID == "" {
			f.JobID = getenv("PMIX_NAMESPACE")
		}
		if f.Rank, _, err = num("OMPI_COMM_WORLD_RANK"); err != nil {
			return nil, err
		}
		if local, _, err = num("OMPI_COMM_WORLD_LOCAL_RANK"); err != nil {
			return nil, err
		}
		if _, _, err := num("OMPI_COMM_WORLD_SIZE"); err != nil {
			return nil, err
		}
		// One task per node (mpirun -npernode 1): the world is the nodes.
		if ls, _, err := num("OMPI_COMM_WORLD_LOCAL_SIZE"); err != nil {
			return nil, err
		} else if ls <= 1 {
			if f.Nodes, _, err = count("OMPI_COMM_WORLD_SIZE"); err != nil {
				return nil, err
			}
		}
	case getenv("PMIX_RANK") != "":
		f.Launcher, f.JobID = "pmix", getenv("PMIX_NAMESPACE")
		if f.Rank, _, err = num("PMIX_RANK"); err != nil {
			return nil, err
		}
	default:
		return nil, fleetErrorf("--fleet: no launcher found in the environment (SLURM_JOB_ID and SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMIX_RANK): start it with srun or mpirun -npernode 1")
	}
	if f.Node == "" {
		f.Node = hostname
	}
	if !nodeName.MatchString(f.Node) {
		return nil, fleetErrorf("--fleet: node name %q cannot name a folder (want up to 255 letters, digits, '.', '_', '-')", trimName(f.Node))
	}
	if local > 0 {
		return nil, fleetErrorf("--fleet: task %d is the second task on node %s: run one task per node (srun --ntasks-per-node=1, mpirun -npernode 1)", f.Rank, f.Node)
	}
	if f.Nodes > 0 && f.Rank >= f.Nodes {
		return nil, fleetErrorf("--fleet: rank %d of a job on %d nodes: more tasks than nodes; run one task per node (srun --ntasks-per-node=1, mpirun -npernode 1)", f.Rank, f.Nodes)
	}
	return &f, nil
}

// expandHostlist expands a Slurm host list such as "n[01-03,7],gpu1" to
// its names (n01 n02 n03 n7 gpu1), so that a barrier can name the nodes
// that never came. Only one bracket per name, as Slurm writes node lists
// of plain names; a list it cannot read gives nil, no error: the list is
// only for naming. A list of more than results.MaxFleetNodes names, or a
// name unfit for a node's folder, is an error (errFleet): a few bytes of
// brackets can stand for billions of names.
func expandHostlist(s string) ([]string, error) {
	var out []string
	add := func(name string) error {
		if len(out) >= results.MaxFleetNodes {
			return fleetErrorf("--fleet: SLURM_JOB_NODELIST names more than %d nodes, the most a fleet may have", results.MaxFleetNodes)
		}
		if !nodeName.MatchString(name) {
			return fleetErrorf("--fleet: SLURM_JOB_NODELIST names a node %q, which cannot name a folder (want up to 255 letters, digits, '.', '_', '-')", trimName(name))
		}
		out = append(out, name)
		return nil
	}
	for len(s) > 0 {
		// The next name ends at a comma outside brackets.
		end, depth := len(s), 0
		for i, c := range s {
			if c == '[' {
				depth++
			} else if c == ']' {
				depth--
			} else if c == ',' && depth == 0 {
				end = i
				break
			}
		}
		item := s[:end]
		if end < len(s) {
			s = s[end+1:]
		} else {
			s = ""
		}
		open := strings.IndexByte(item, '[')
		if open < 0 {
			if item != "" {
				if err := add(item); err != nil {
					return nil, err
				}
			}
			continue
		}
		closeAt := strings.IndexByte(item, ']')
		if closeAt < open || strings.ContainsAny(item[closeAt+1:], "[]") {
			return nil, nil
		}
		prefix, suffix := item[:open], item[closeAt+1:]
		for _, r := range strings.Split(item[open+1:closeAt], ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || b < a {
				return nil, nil
			}
			// Checked before the loop, so a range of billions costs
			// nothing: add refuses the first name past the maximum.
			if b-a >= results.MaxFleetNodes {
				b = a + results.MaxFleetNodes
			}
			for n := a; n <= b; n++ {
				// Slurm keeps the width of the lower bound: n[08-10].
				if err := add(fmt.Sprintf("%s%0*d%s", prefix, len(lo), n, suffix)); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// trimName shortens a value from the environment for an error message,
// which stays one short line however long the value.
func trimName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Barrier is the meeting of a fleet's nodes on the shared output
// folder (run --fleet-sync).
type Barrier struct {
	Dir      string         // the shared output folder, --out
	Fleet    *results.Fleet // this node; Nodes is how many must arrive
	Expected []string       // the nodes' names when the launcher lists them (SLURM_JOB_NODELIST)
	Deadline time.Duration  // how long to wait for the others
	// Margin is how long after the last arrival the fleet starts: time
	// for every node to see the last arrival file, polling.
	Margin time.Duration
	Poll   time.Duration
}

// BeforeStart meets the fleet at the barrier (meet) as a run's
// Options.BeforeStart: it records the meeting in the result (Fleet.Sync)
// and warns when this node saw the last arrival only after the common
// start, so started late.
func (b *Barrier) BeforeStart(ctx context.Context, res *results.Result) error {
	sync, err := b.meet(ctx)
	if err != nil {
		return err
	}
	res.Fleet.Sync = sync
	if sync.LateNS > 0 {
		res.Warnings = append(res.Warnings, results.NewWarning(results.WarnFleetLate, results.SeverityWarning, 0, "",
			"fleet: this node saw the last arrival after the common start and started "+time.Duration(sync.LateNS).Round(time.Millisecond).String()+" late").
			WithMeans("its first moments ran beside fewer nodes than the others' did; read its first repetition with care, or start the nodes closer together"))
	}
	return nil
}

// arrival is one node's file at the barrier.
type arrival struct {
	Node          string `json:"node"`
	Rank          int    `json:"rank"`
	ClockOffsetNS int64  `json:"clock_offset_ns"`
}

// syncPath is the barrier's folder in the shared output folder, one
// per job and step (syncKey), so an earlier job's or step's arrivals never
// count. A dot folder: the fleet report reads only node folders.
func syncPath(out, key string) string {
	return filepath.Join(out, ".fleet-sync-"+key)
}

// syncKey names a barrier: the job, and its step where the launcher has
// steps (two srun --fleet-sync in one batch job are two barriers: the
// first one's arrivals once let the second start unsynchronised).
func syncKey(f *results.Fleet) string {
	if f.StepID == "" {
		return f.JobID
	}
	return f.JobID + "." + f.StepID
}

// Bounds on what the barrier reads from its folder, which every user who
// can write the shared --out can fill: an arrival file is a few dozen
// bytes, and a node leaves at most four entries (its arrival, its marker,
// and the probe and temporary file it removes).
const (
	maxArrivalFile = 4 << 10
	maxSyncEntries = 4*results.MaxFleetNodes + 64
	// markerWait is how long a node that gives up waits for its marker
	// to be written, on a file system that may no longer answer.
	markerWait = 5 * time.Second
)

// Check says whether the launcher gave what the barrier needs: how many
// nodes to wait for, and a job id fit for its folder's name. An error is
// errFleet: the run can refuse it before it writes anything.
func (b *Barrier) Check() error {
	if b.Fleet.Nodes <= 0 {
		return fleetErrorf("--fleet-sync: the launcher (%s) does not say how many nodes to wait for", b.Fleet.Launcher)
	}
	if b.Fleet.JobID == "" || !nodeName.MatchString(b.Fleet.JobID) {
		return fleetErrorf("--fleet-sync: the launcher (%s) gives no job id fit for a folder name (%q): the barrier needs one per job", b.Fleet.Launcher, trimName(b.Fleet.JobID))
	}
	if b.Fleet.StepID != "" && !nodeName.MatchString(b.Fleet.StepID) {
		return fleetErrorf("--fleet-sync: the launcher (%s) gives a step id unfit for a folder name (%q)", b.Fleet.Launcher, trimName(b.Fleet.StepID))
	}
	return nil
}

// errBarrierDeadline is the cause of a barrier that reached its deadline.
var errBarrierDeadline = errors.New("the barrier's deadline passed")

// meet writes this node's arrival, waits until every node has arrived,
// then until the common start, and says how that went. Each node's clock
// offset to the shared folder's is estimated from the mtime of a file it
// writes there; the common start is the latest arrival file's mtime plus
// Margin, on the folder's clock, which every node converts to its own.
// A node that gives up writes so, and every node waiting fails with it:
// no node measures alone while the others have left.
//
// Every file system call runs apart from the wait (see await), so the
// deadline and ^C hold even where the shared file system stops answering.
func (b *Barrier) meet(ctx context.Context) (*results.FleetSync, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	if b.Poll <= 0 {
		b.Poll = 100 * time.Millisecond
	}
	began := time.Now()
	waiting, stop := context.WithTimeoutCause(ctx, b.Deadline, errBarrierDeadline)
	defer stop()
	type arrived struct {
		dir    *syncDir
		offset int64
		err    error
	}
	got, err := await(waiting, func() arrived {
		dir, err := openSyncDir(syncPath(b.Dir, syncKey(b.Fleet)))
		if err != nil {
			return arrived{err: err}
		}
		offset, err := dir.arrive(b.Fleet)
		if err != nil {
			dir.close()
			return arrived{err: err}
		}
		return arrived{dir: dir, offset: offset}
	}, func(a arrived) {
		if a.dir != nil {
			a.dir.close()
		}
	})
	if err == nil {
		err = got.err
	}
	if err != nil {
		return nil, b.gaveUp(nil, nil, err)
	}
	dir, offset := got.dir, got.offset
	defer dir.close()
	sync := &results.FleetSync{Deadline: results.Duration(b.Deadline), ClockOffsetNS: offset}
	tick := time.NewTicker(b.Poll)
	defer tick.Stop()
	var seen folder // the last reading, which a giving up names
	for {
		fd, err := dir.dup()
		if err != nil {
			return nil, b.gaveUp(dir, seen.arrived, err)
		}
		now, err := await(waiting, func() folder { return readArrivals(fd, b.Fleet.Nodes) },
			func(folder) {})
		if err == nil {
			err = now.err
		}
		if err != nil {
			return nil, b.gaveUp(dir, seen.arrived, err)
		}
		seen = now
		if len(seen.gaveUp) > 0 {
			return nil, fmt.Errorf("fleet barrier: %s gave up waiting for the others; %s", strings.Join(seen.gaveUp, ", "), b.missing(seen.arrived))
		}
		if len(seen.arrived) >= b.Fleet.Nodes {
			sync.WaitedNS = time.Since(began).Nanoseconds()
			sync.Offsets = map[string]int64{}
			for _, a := range seen.arrived {
				sync.Offsets[a.Node] = a.ClockOffsetNS
			}
			sync.StartAt = seen.last.Add(b.Margin).UTC()
			// The start on this node's clock: the folder's time plus
			// how far ahead this clock runs.
			local := sync.StartAt.Add(time.Duration(offset))
			if wait := time.Until(local); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return nil, fmt.Errorf("fleet barrier: waiting for the common start: %w", context.Cause(ctx))
				}
			} else {
				sync.LateNS = -wait.Nanoseconds()
			}
			return sync, nil
		}
		select {
		case <-tick.C:
		case <-waiting.Done():
			return nil, b.gaveUp(dir, seen.arrived, context.Cause(waiting))
		}
	}
}

// await runs fn apart and waits for it until ctx is done: a file system
// that stops answering (a dead NFS server, a file that blocks) then holds
// up only fn's goroutine, not the barrier's deadline or ^C. What fn
// returns after that is handed to abandon, to release it.
func await[T any](ctx context.Context, fn func() T, abandon func(T)) (T, error) {
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		go func() { abandon(<-ch) }()
		var zero T
		return zero, context.Cause(ctx)
	}
}

// gaveUp writes this node's marker, so that every node still waiting
// fails with it, and says why the node left: err, which is the
// deadline's cause when the deadline passed. dir is nil when the node
// never got into the folder, and then there is no marker to write.
func (b *Barrier) gaveUp(dir *syncDir, arrived map[string]arrival, err error) error {
	if errors.Is(err, errBarrierDeadline) {
		err = fmt.Errorf("after %v %s", b.Deadline, b.missing(arrived))
	}
	if dir == nil {
		return fmt.Errorf("fleet barrier: %w", err)
	}
	limit, cancel := context.WithTimeout(context.Background(), markerWait)
	defer cancel()
	fd, merr := dir.dup()
	if merr == nil {
		var res error
		res, merr = await(limit, func() error { return markGaveUp(fd, b.Fleet.Node) }, func(error) {})
		if merr == nil {
			merr = res
		}
	}
	if merr != nil {
		return fmt.Errorf("fleet barrier: %w; and the others are not told (%s.gaveup: %v): they wait until their own deadline", err, b.Fleet.Node, merr)
	}
	return fmt.Errorf("fleet barrier: %w", err)
}

// missing names the nodes that never arrived, or their ranks when the
// launcher does not list the nodes; the first few of a big fleet.
func (b *Barrier) missing(arrived map[string]arrival) string {
	const named = 32
	list := func(names []string) string {
		if len(names) > named {
			return strings.Join(names[:named], ", ") + fmt.Sprintf(" and %d more", len(names)-named)
		}
		return strings.Join(names, ", ")
	}
	var names []string
	for _, a := range arrived {
		names = append(names, a.Node)
	}
	slices.Sort(names)
	have := fmt.Sprintf("%d of %d nodes arrived (%s)", len(arrived), b.Fleet.Nodes, list(names))
	var gone []string
	if len(b.Expected) > 0 {
		for _, n := range b.Expected {
			if _, ok := arrived[n]; !ok {
				gone = append(gone, n)
			}
		}
		if len(gone) > 0 {
			return have + "; never arrived: " + list(gone)
		}
	}
	ranks := map[int]bool{}
	for _, a := range arrived {
		ranks[a.Rank] = true
	}
	for r := 0; r < b.Fleet.Nodes; r++ {
		if !ranks[r] {
			gone = append(gone, strconv.Itoa(r))
		}
	}
	return have + "; never arrived: rank " + list(gone)
}

// syncDir is the barrier's folder, held open: every file in it is made
// and read relative to this descriptor, with O_NOFOLLOW, so neither a link
// planted in the folder nor one swapped in for the folder after it was
// checked redirects a write or a read. Every node shares --out, and
// whoever else can write there can plant anything.
type syncDir struct {
	fd   int
	path string
}

// openSyncDir makes the barrier's folder, or opens the one another node
// of the job made, and refuses one that is a link, not a folder, or not
// owned by this user (all nodes of a job run as one user).
func openSyncDir(path string) (*syncDir, error) {
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		what := "not a folder"
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			what = "a link, not a folder"
		}
		return nil, fmt.Errorf("%s is %s: refused as the barrier's folder (remove it)", path, what)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if uid := os.Geteuid(); st.Uid != uint32(uid) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is owned by uid %d, not by this user (uid %d): refused, a barrier's folder is its own job's (on NFS with root_squash, run the fleet as a user)", path, st.Uid, uid)
	}
	return &syncDir{fd: fd, path: path}, nil
}

func (d *syncDir) close() { unix.Close(d.fd) }

// dup is a descriptor of the folder for a goroutine of its own, which
// closes it: one that outlives the barrier (see await) never uses a
// descriptor the barrier closed, or one reused since.
func (d *syncDir) dup() (int, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "dup", Path: d.path, Err: err}
	}
	return fd, nil
}

// create makes name in the folder, new: O_EXCL refuses anything already
// there, a link included, which it would otherwise follow.
func createAt(dirfd int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// writeAt creates name (see createAt), removing what was there, and
// writes data to it.
func writeAt(dirfd int, name string, data []byte) error {
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	f, err := createAt(dirfd, name)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// arrive estimates this node's clock offset and writes its arrival, whole
// or not at all: written aside, then renamed over whatever has the name.
func (d *syncDir) arrive(f *results.Fleet) (int64, error) {
	offset, err := clockOffset(d.fd, f.Node)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.path, err)
	}
	data, err := json.Marshal(arrival{Node: f.Node, Rank: f.Rank, ClockOffsetNS: offset})
	if err != nil {
		return 0, err
	}
	tmp, name := "."+f.Node+".arrived.tmp", f.Node+".arrived"
	if err := writeAt(d.fd, tmp, data); err != nil {
		return 0, fmt.Errorf("%s: %w", d.path, err)
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return 0, &fs.PathError{Op: "rename", Path: filepath.Join(d.path, name), Err: err}
	}
	return offset, nil
}

// markGaveUp writes node's .gaveup marker in the folder dirfd, which it
// closes. A marker already there is fine if it is a file; a link or
// anything else in its place is not written through.
func markGaveUp(dirfd int, node string) error {
	defer unix.Close(dirfd)
	name := node + ".gaveup"
	f, err := createAt(dirfd, name)
	if err == nil {
		return f.Close()
	}
	var st unix.Stat_t
	if !errors.Is(err, unix.EEXIST) || unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s is there and is not a file", name)
	}
	return nil
}

// folder is what a node read in the barrier's folder: who arrived, the
// latest arrival's mtime (the folder's clock), and who gave up.
type folder struct {
	arrived map[string]arrival
	last    time.Time
	gaveUp  []string
	err     error
}

// readArrivals reads the barrier's folder dirfd, which it closes. Only
// regular files count, each read up to maxArrivalFile, and only arrivals
// that can be the job's: named after their node, a rank below nodes, one
// node per rank. Anything else under those names (a FIFO, a device, a
// link, a folder, a file too big) is passed over: the node it names has
// not arrived.
func readArrivals(dirfd int, nodes int) folder {
	defer unix.Close(dirfd)
	// A fresh open of the folder: descriptors duplicated from one share
	// its read offset.
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return folder{err: err}
	}
	dir := os.NewFile(uintptr(fd), ".")
	defer dir.Close()
	names, err := dir.Readdirnames(maxSyncEntries + 1)
	if err != nil && err != io.EOF {
		return folder{err: err}
	}
	if len(names) > maxSyncEntries {
		return folder{err: fmt.Errorf("the barrier's folder holds more than %d entries, more than a fleet of %d nodes leaves there", maxSyncEntries, results.MaxFleetNodes)}
	}
	slices.Sort(names) // which of two arrivals claiming a rank counts does not depend on the listing's order
	f := folder{arrived: map[string]arrival{}}
	ranks := map[int]bool{}
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		if node, ok := strings.CutSuffix(name, ".gaveup"); ok {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				f.gaveUp = append(f.gaveUp, node)
			}
			continue
		}
		node, ok := strings.CutSuffix(name, ".arrived")
		if !ok {
			continue
		}
		a, mtime, ok := readArrival(fd, name)
		if !ok || a.Node != node || a.Rank < 0 || a.Rank >= nodes || ranks[a.Rank] {
			continue
		}
		ranks[a.Rank] = true
		f.arrived[node] = a
		if mtime.After(f.last) {
			f.last = mtime
		}
	}
	return f
}

// readArrival reads one arrival file, if it is a regular file of at most
// maxArrivalFile bytes. The open neither follows a link nor waits for a
// FIFO's writer; the type and size are those of the file opened.
func readArrival(dirfd int, name string) (arrival, time.Time, bool) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return arrival{}, time.Time{}, false // gone, replaced, or a link
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxArrivalFile {
		return arrival{}, time.Time{}, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxArrivalFile+1))
	var a arrival
	if err != nil || len(data) > maxArrivalFile || json.Unmarshal(data, &a) != nil {
		return arrival{}, time.Time{}, false
	}
	return a, st.ModTime(), true
}

// clockOffset estimates this clock minus the shared folder's: the middle
// of the local clock read around creating a file, minus the mtime the
// file system gave it (on NFS, the server's clock).
func clockOffset(dirfd int, node string) (int64, error) {
	probe := "." + node + ".probe"
	unix.Unlinkat(dirfd, probe, 0) // a probe left by a node killed here
	defer unix.Unlinkat(dirfd, probe, 0)
	before := time.Now()
	if err := writeAt(dirfd, probe, []byte(node)); err != nil {
		return 0, err
	}
	after := time.Now()
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, probe, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: probe, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, fmt.Errorf("%s was replaced while it was written", probe)
	}
	mid := before.Add(after.Sub(before) / 2)
	return mid.Sub(time.Unix(st.Mtim.Unix())).Nanoseconds(), nil
}
