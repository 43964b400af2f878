package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// A fleet run is one xrcbench run per node, started by the cluster's own
// launcher (srun, mpirun -npernode 1): xrcbench never starts anything on
// another machine. Each node finds out who it is from the launcher's
// environment and writes its run folder under <out>/<node>/.

// ErrFleet is matched by the errors about a fleet's environment: no
// launcher, a node name unfit for a folder, a second task on a node. They
// are bad usage (exit 2).
var ErrFleet = errors.New("fleet refused")

type fleetError struct{ msg string }

func (e *fleetError) Error() string        { return e.msg }
func (e *fleetError) Is(target error) bool { return target == ErrFleet }

func fleetErrorf(format string, args ...any) error {
	return &fleetError{fmt.Sprintf(format, args...)}
}

// nodeName is what a node's folder may be called: a host name, never a path.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$`)

// FleetIdentity reads the launcher's environment: Slurm (SLURM_JOB_ID,
// SLURM_PROCID, SLURM_NNODES, SLURMD_NODENAME, SLURM_LOCALID), Open MPI
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE) or PMIx
// (PMIX_RANK, PMIX_NAMESPACE), in that order; the node is named by the
// launcher, or else by hostname. A task that is not the first on its node
// is refused: XRC registration is node-local, and two runs on one device
// would measure each other.
func FleetIdentity(getenv func(string) string, hostname string) (*results.Fleet, error) {
	num := func(name string) (int, bool, error) {
		v := getenv(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, fleetErrorf("--fleet: %s=%q: want a number", name, v)
		}
		return n, true, nil
	}
	var f results.Fleet
	var local int
	var err error
	var ok bool
	switch {
	case getenv("SLURM_JOB_ID") != "" && getenv("SLURM_PROCID") != "":
		f.Launcher, f.JobID, f.Node = "slurm", getenv("SLURM_JOB_ID"), getenv("SLURMD_NODENAME")
		if f.Rank, _, err = num("SLURM_PROCID"); err != nil {
			return nil, err
		}
		if f.Nodes, ok, err = num("SLURM_NNODES"); err != nil {
			return nil, err
		} else if !ok {
			if f.Nodes, _, err = num("SLURM_JOB_NUM_NODES"); err != nil {
				return nil, err
			}
		}
		if local, _, err = num("SLURM_LOCALID"); err != nil {
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
		size, _, err := num("OMPI_COMM_WORLD_SIZE")
		if err != nil {
			return nil, err
		}
		// One task per node (mpirun -npernode 1): the world is the nodes.
		if ls, _, err := num("OMPI_COMM_WORLD_LOCAL_SIZE"); err != nil {
			return nil, err
		} else if ls <= 1 {
			f.Nodes = size
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
		return nil, fleetErrorf("--fleet: node name %q cannot name a folder (want letters, digits, '.', '_', '-')", f.Node)
	}
	if local > 0 {
		return nil, fleetErrorf("--fleet: task %d is the second task on node %s: run one task per node (srun --ntasks-per-node=1, mpirun -npernode 1)", f.Rank, f.Node)
	}
	if f.Nodes > 0 && f.Rank >= f.Nodes {
		return nil, fleetErrorf("--fleet: rank %d of a job on %d nodes: more tasks than nodes; run one task per node (srun --ntasks-per-node=1, mpirun -npernode 1)", f.Rank, f.Nodes)
	}
	return &f, nil
}

// ExpandHostlist expands a Slurm host list such as "n[01-03,7],gpu1" to
// its names (n01 n02 n03 n7 gpu1), so that a barrier can name the nodes
// that never came. Only one bracket per name, as Slurm writes node lists
// of plain names; anything it cannot read gives nil.
func ExpandHostlist(s string) []string {
	var out []string
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
				out = append(out, item)
			}
			continue
		}
		closeAt := strings.IndexByte(item, ']')
		if closeAt < open || strings.ContainsAny(item[closeAt+1:], "[]") {
			return nil
		}
		prefix, suffix := item[:open], item[closeAt+1:]
		for _, r := range strings.Split(item[open+1:closeAt], ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || b < a || b-a > 100000 {
				return nil
			}
			for n := a; n <= b; n++ {
				// Slurm keeps the width of the lower bound: n[08-10].
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, len(lo), n, suffix))
			}
		}
	}
	return out
}

// FleetBarrier is the meeting of a fleet's nodes on the shared output
// folder (run --fleet-sync).
type FleetBarrier struct {
	Dir      string         // the shared output folder, --out
	Fleet    *results.Fleet // this node; Nodes is how many must arrive
	Expected []string       // the nodes' names when the launcher lists them (SLURM_JOB_NODELIST)
	Deadline time.Duration  // how long to wait for the others
	// Margin is how long after the last arrival the fleet starts: time
	// for every node to see the last arrival file, polling.
	Margin time.Duration
	Poll   time.Duration
}

// arrival is one node's file at the barrier.
type arrival struct {
	Node          string `json:"node"`
	Rank          int    `json:"rank"`
	ClockOffsetNS int64  `json:"clock_offset_ns"`
}

// FleetSyncDir is the barrier's folder in the shared output folder, one
// per job (so an earlier job's arrivals never count). A dot folder: the
// fleet report reads only node folders.
func FleetSyncDir(out, jobID string) string {
	return filepath.Join(out, ".fleet-sync-"+jobID)
}

// Meet writes this node's arrival, waits until every node has arrived,
// then until the common start, and says how that went. Each node's clock
// offset to the shared folder's is estimated from the mtime of a file it
// writes there; the common start is the latest arrival file's mtime plus
// Margin, on the folder's clock, which every node converts to its own.
// A node that gives up writes so, and every node waiting fails with it:
// no node measures alone while the others have left.
func (b *FleetBarrier) Meet(ctx context.Context) (*results.FleetSync, error) {
	if b.Fleet.Nodes <= 0 {
		return nil, fleetErrorf("--fleet-sync: the launcher (%s) does not say how many nodes to wait for", b.Fleet.Launcher)
	}
	if b.Fleet.JobID == "" || !nodeName.MatchString(b.Fleet.JobID) {
		return nil, fleetErrorf("--fleet-sync: the launcher (%s) gives no job id fit for a folder name (%q): the barrier needs one per job", b.Fleet.Launcher, b.Fleet.JobID)
	}
	if b.Poll <= 0 {
		b.Poll = 100 * time.Millisecond
	}
	began := time.Now()
	dir := FleetSyncDir(b.Dir, b.Fleet.JobID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet barrier: %w", err)
	}
	offset, err := clockOffset(dir, b.Fleet.Node)
	if err != nil {
		return nil, fmt.Errorf("fleet barrier: %w", err)
	}
	me := arrival{Node: b.Fleet.Node, Rank: b.Fleet.Rank, ClockOffsetNS: offset}
	data, _ := json.Marshal(me)
	if err := results.WriteFileAtomic(filepath.Join(dir, b.Fleet.Node+".arrived"), data, 0o644); err != nil {
		return nil, fmt.Errorf("fleet barrier: %w", err)
	}
	sync := &results.FleetSync{Deadline: results.Duration(b.Deadline), ClockOffsetNS: offset}
	limit := time.NewTimer(b.Deadline)
	defer limit.Stop()
	tick := time.NewTicker(b.Poll)
	defer tick.Stop()
	for {
		arrived, last, gaveUp, err := readArrivals(dir)
		if err != nil {
			return nil, fmt.Errorf("fleet barrier: %w", err)
		}
		if len(gaveUp) > 0 {
			return nil, fmt.Errorf("fleet barrier: %s gave up waiting for the others; %s", strings.Join(gaveUp, ", "), b.missing(arrived))
		}
		if len(arrived) >= b.Fleet.Nodes {
			sync.WaitedNS = time.Since(began).Nanoseconds()
			sync.Offsets = map[string]int64{}
			for _, a := range arrived {
				sync.Offsets[a.Node] = a.ClockOffsetNS
			}
			sync.StartAt = last.Add(b.Margin).UTC()
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
		case <-limit.C:
			os.WriteFile(filepath.Join(dir, b.Fleet.Node+".gaveup"), nil, 0o644)
			return nil, fmt.Errorf("fleet barrier: after %v %s", b.Deadline, b.missing(arrived))
		case <-ctx.Done():
			os.WriteFile(filepath.Join(dir, b.Fleet.Node+".gaveup"), nil, 0o644)
			return nil, fmt.Errorf("fleet barrier: %w", context.Cause(ctx))
		}
	}
}

// missing names the nodes that never arrived, or their ranks when the
// launcher does not list the nodes.
func (b *FleetBarrier) missing(arrived map[string]arrival) string {
	var names []string
	for _, a := range arrived {
		names = append(names, a.Node)
	}
	slices.Sort(names)
	have := fmt.Sprintf("%d of %d nodes arrived (%s)", len(arrived), b.Fleet.Nodes, strings.Join(names, ", "))
	var gone []string
	if len(b.Expected) > 0 {
		for _, n := range b.Expected {
			if _, ok := arrived[n]; !ok {
				gone = append(gone, n)
			}
		}
		if len(gone) > 0 {
			return have + "; never arrived: " + strings.Join(gone, ", ")
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
	return have + "; never arrived: rank " + strings.Join(gone, ", ")
}

// readArrivals reads the barrier's folder: who arrived, the latest
// arrival's mtime (the folder's clock), and who gave up.
func readArrivals(dir string) (map[string]arrival, time.Time, []string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	arrived := map[string]arrival{}
	var last time.Time
	var gaveUp []string
	for _, e := range ents {
		name := e.Name()
		if n, ok := strings.CutSuffix(name, ".gaveup"); ok {
			gaveUp = append(gaveUp, n)
			continue
		}
		node, ok := strings.CutSuffix(name, ".arrived")
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			continue // replaced meanwhile: the next poll reads it
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		var a arrival
		if err != nil || json.Unmarshal(data, &a) != nil || a.Node != node {
			continue
		}
		arrived[node] = a
		if st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	return arrived, last, gaveUp, nil
}

// clockOffset estimates this clock minus the shared folder's: the middle
// of the local clock read around creating a file, minus the mtime the
// file system gave it (on NFS, the server's clock).
func clockOffset(dir, node string) (int64, error) {
	probe := filepath.Join(dir, "."+node+".probe")
	os.Remove(probe)
	before := time.Now()
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	_, werr := f.Write([]byte(node))
	cerr := f.Close()
	after := time.Now()
	defer os.Remove(probe)
	if err := errors.Join(werr, cerr); err != nil {
		return 0, err
	}
	st, err := os.Stat(probe)
	if err != nil {
		return 0, err
	}
	mid := before.Add(after.Sub(before) / 2)
	return mid.Sub(st.ModTime()).Nanoseconds(), nil
}
