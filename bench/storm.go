package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// The storm runner: each thread is one local rank of an MPI job and runs
// its plan's steps (workloads.StormPlan) once per repetition, from the
// shared start deadline, through the provider's per-op calls. A rank
// serves its steps in plan order, skipping over those not ready yet: a
// step whose intended start has not come, or a registration whose QP
// number its creator has not sent back (published in the shared segment's
// slot of the connection).

// stormRank is a thread's storm state.
type stormRank struct {
	steps  []workloads.Step
	held   []uint32 // QPs this rank holds a handle on
	mine   []uint32 // per connection: the QP this rank created (rewire drops it)
	doneNS int64    // completion time after the storm's start; -1 unfinished
	runqNS int64    // time it was runnable but not running until then; -1 unknown
	downNS int64    // teardown time (teardown unreg); -1 not measured
	exit   bool     // teardown exit: leave the handles to the process's end
	recs   map[string]*kindRec
}

// runStorm runs the rank's storm, then its teardown.
func (t *thread) runStorm(deadline uint64) error {
	st := t.storm
	st.doneNS, st.downNS, st.runqNS = -1, -1, -1
	// The makespan runs from the deadline, so what the harness does
	// after it is in the figure: the rank wakes before the deadline (a
	// sleeper wakes up to a few hundred us late), reads its run-queue
	// time (a file read of ~100us), and spins to the deadline.
	if err := waitUntil(verbs.Now, deadline-min(deadline, stormStartSpin), t.shm.aborted); err != nil {
		return err
	}
	runq0 := runQueueNS()
	if err := spinUntil(deadline, t.shm.aborted); err != nil {
		return err
	}
	t.started = verbs.Now()
	t.measuring = true
	t.lastEnd = t.started
	t.ivStart = deadline
	t.ivNext = deadline + uint64(t.cfg.Interval)
	err := t.storming(deadline)
	if runq1 := runQueueNS(); runq0 >= 0 && runq1 >= runq0 && st.doneNS >= 0 {
		st.runqNS = runq1 - runq0
	}
	if err == nil && !st.exit && !t.shm.stopRequested() {
		err = t.stormTeardown()
	}
	t.ended = verbs.Now()
	t.measuring = false
	if ferr := t.flushInterval(); err == nil {
		err = ferr
	}
	t.timerPost = verbs.TimerOverheadNS()
	return err
}

// stormStartSpin is how long before the storm's start a rank stops
// sleeping and spins: more than the wake-up lateness seen on a loaded VM.
const stormStartSpin = uint64(2 * time.Millisecond)

// spinUntil returns at the CLOCK_MONOTONIC time deadline (ns), reading
// the clock in a loop.
func spinUntil(deadline uint64, abort func() bool) error {
	for verbs.Now() < deadline {
		if abort() {
			return ErrAborted
		}
	}
	return nil
}

// storming runs the steps until all are done or the run is stopped.
func (t *thread) storming(start uint64) error {
	st := t.storm
	done := make([]bool, len(st.steps))
	first, left := 0, len(st.steps)
	var idleSince uint64
	for left > 0 {
		if t.shm.aborted() {
			return ErrAborted
		}
		if t.shm.stopRequested() {
			return nil
		}
		now := verbs.Now()
		pick := -1
		for i := first; i < len(st.steps); i++ {
			s := st.steps[i]
			if done[i] {
				continue
			}
			if start+uint64(s.Start) > now {
				break // in order of intended start: none later is due
			}
			if s.Act != workloads.ActReg || t.shm.qpn(s.Conn) != 0 {
				pick = i
				break
			}
		}
		if pick < 0 {
			// Waiting for a number another rank sends back, or for the
			// next contact: the workload's wait, like a barrier's.
			if idleSince == 0 {
				idleSince = now
			}
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		if idleSince != 0 {
			w := verbs.Now() - idleSince
			t.waited += w
			t.waitNS += w
			idleSince = 0
		}
		if err := t.stormStep(st.steps[pick]); err != nil {
			return err
		}
		done[pick] = true
		left--
		for first < len(done) && done[first] {
			first++
		}
	}
	st.doneNS = int64(verbs.Now() - start)
	return nil
}

// stormStep runs one step.
func (t *thread) stormStep(s workloads.Step) error {
	st := t.storm
	switch s.Act {
	case workloads.ActCreate:
		qpn, err := t.stormCreate(workloads.OpCreate)
		if err != nil {
			return err
		}
		st.mine[s.Conn] = qpn
		t.shm.setQPN(s.Conn, qpn)
	case workloads.ActRewire:
		// The connection goes down: the creator drops its handle (which
		// destroys the QP unless a rank registered first) and wires it
		// again with a new QP, whose number replaces the old one.
		old := st.mine[s.Conn]
		if err := t.stormUnreg(old); err != nil {
			return err
		}
		qpn, err := t.stormCreate(workloads.OpCreate)
		if err != nil {
			return err
		}
		st.mine[s.Conn] = qpn
		t.shm.setQPN(s.Conn, qpn)
	case workloads.ActReg:
		qpn := t.shm.qpn(s.Conn)
		e, err := t.stormOp(verbs.OpReg, qpn)
		if err != nil {
			return err
		}
		switch {
		case e == 0:
			if err := t.stormRecord(workloads.OpReg, 0); err != nil {
				return err
			}
			st.held = append(st.held, qpn)
		case e == syscall.EINVAL && t.spec.Storm.Reconnect > 0:
			// The QP was destroyed under the number: the sender restarts
			// the handshake and this rank creates a receive QP of its own.
			if err := t.stormRecord(workloads.OpRegRetry, 0); err != nil {
				return err
			}
			if _, err := t.stormCreate(workloads.OpRestart); err != nil {
				return err
			}
		default:
			t.stormRecord(workloads.OpReg, e)
			return fmt.Errorf("thread %d: reg of QP %#x (connection %d): %w", t.g, qpn, s.Conn, e)
		}
	}
	return nil
}

// stormCreate creates a QP, recorded as kind, and holds it.
func (t *thread) stormCreate(kind string) (uint32, error) {
	e, err := t.stormOp(verbs.OpCreate, 0)
	if err != nil {
		return 0, err
	}
	if rerr := t.stormRecord(kind, e); rerr != nil {
		return 0, rerr
	}
	if e != 0 {
		return 0, fmt.Errorf("thread %d: %s: %w", t.g, kind, e)
	}
	qpn := t.batch.QPNs[0]
	t.storm.held = append(t.storm.held, qpn)
	t.noteCreated(qpn)
	if t.modify != nil {
		// Out of RESET (--qp-state) before the number goes back, as the
		// MPI libraries do: timed as kind modify.
		t.where[0] = 0
		if err := t.runBatch(t.modify, 1); err != nil {
			return 0, err
		}
		if e := t.batch.Errno(0); e != 0 {
			return 0, fmt.Errorf("thread %d: modify of QP %#x: %w", t.g, qpn, e)
		}
	}
	return qpn, nil
}

// stormUnreg drops the rank's handle on qpn, recorded as unreg_last when
// that destroyed the QP, unreg otherwise (or when the provider cannot
// tell).
func (t *thread) stormUnreg(qpn uint32) error {
	e, err := t.stormOp(verbs.OpUnreg, qpn)
	if err != nil {
		return err
	}
	kind := workloads.OpUnreg
	if e == 0 && t.batch.Destroyed(0) == verbs.WasDestroyed {
		kind = workloads.OpUnregLast
	}
	if rerr := t.stormRecord(kind, e); rerr != nil {
		return rerr
	}
	if e != 0 {
		return fmt.Errorf("thread %d: unreg of QP %#x: %w", t.g, qpn, e)
	}
	st := t.storm
	for i, q := range st.held {
		if q == qpn {
			st.held = append(st.held[:i], st.held[i+1:]...)
			break
		}
	}
	return nil
}

// stormOp runs one timed operation through the batch path.
func (t *thread) stormOp(op verbs.Op, qpn uint32) (syscall.Errno, error) {
	b := t.batch
	b.QPNs[0] = qpn
	if _, err := t.dom.RunBatch(op, b, 1); err != nil {
		return 0, fmt.Errorf("thread %d: %v: %w", t.g, op, err)
	}
	return b.Errno(0), nil
}

// stormRecord records the operation just run as kind; a failure (errno e)
// is an error of the kind.
func (t *thread) stormRecord(kind string, e syscall.Errno) error {
	rec := t.storm.recs[kind]
	if rec == nil {
		return fmt.Errorf("thread %d: no recording of %s in this storm", t.g, kind)
	}
	timed := recordAll(rec.iv, t.batch.NS[:1])
	rec.ivN++
	rec.count++
	rec.batches++
	if e != 0 {
		rec.fail(workloads.ErrnoName(e))
	}
	now := verbs.Now()
	t.account(rec, now, timed)
	if now >= t.ivNext {
		return t.flushIntervalAt(now)
	}
	return nil
}

// stormTeardown: every rank unregisters everything it holds (MVAPICH's
// finalize), from a common start after every rank is wired.
func (t *thread) stormTeardown() error {
	margin := uint64(5*time.Millisecond + time.Duration(t.n)*100*time.Microsecond)
	if err := t.barrier(func() { t.shm.setDeadline(verbs.Now() + margin) }); err != nil {
		return err
	}
	start, t0 := t.shm.deadline(), verbs.Now()
	if err := waitUntil(verbs.Now, start, t.shm.aborted); err != nil {
		return err
	}
	// Waiting for the common start is the workload's, as a barrier's.
	w := verbs.Now() - t0
	t.waited += w
	t.waitNS += w
	st := t.storm
	for len(st.held) > 0 {
		if err := t.stormUnreg(st.held[len(st.held)-1]); err != nil {
			return err
		}
	}
	st.downNS = int64(verbs.Now() - start)
	return nil
}

// stormRelease drops, unmeasured, what a rank still holds after an error.
func (t *thread) stormRelease() {
	st := t.storm
	for _, q := range st.held {
		t.dom.Unreg(q)
	}
	st.held = nil
}

// StormNodes is the storm's node count: --nodes, or the workload's.
func (c *Config) StormNodes() int {
	if c.Nodes != 0 {
		return c.Nodes
	}
	return c.Workload.Storm.Nodes
}

func (c *Config) simMaxQPs() int {
	if c.SimMaxQPs > 0 {
		return c.SimMaxQPs
	}
	return verbs.DefaultSimMaxQPs
}

// StormDefaults makes a storm configuration what the engine runs: one
// storm per repetition, no warm-up, one QP slot per connection.
func (c *Config) StormDefaults() {
	if c.Workload == nil || c.Workload.Mode != workloads.StormMode {
		return
	}
	c.Iterations, c.Duration, c.Warmup = 1, 0, 0
	n, ranks := c.StormNodes(), c.Procs*c.Threads
	if n >= 2 && n <= workloads.MaxStormNodes && ranks > 0 && ranks <= MaxProcs*MaxThreads {
		c.QPs = c.Workload.Storm.QPs(n, ranks)
	}
}

// stormSize refuses a storm too big to plan, before the generic checks
// would blame --qps for it.
func (c *Config) stormSize() error {
	n := c.StormNodes()
	if n < 2 || n > workloads.MaxStormNodes {
		return fmt.Errorf("--nodes %d: want 2 to %d (the job's nodes, this one included)", n, workloads.MaxStormNodes)
	}
	ranks := c.Procs * c.Threads
	if c.Procs <= 0 || c.Threads <= 0 || ranks > MaxProcs*MaxThreads {
		return nil // the generic checks name the flag
	}
	st := c.Workload.Storm
	if q := int64(n-1) * int64(ranks) * int64(st.Rails); q > MaxQPs {
		return fmt.Errorf("storm of %d nodes x %d ranks x %d rail(s): %d receive QPs on the node, at most %d", n, ranks, st.Rails, q, MaxQPs)
	}
	if c.Iterations != 1 || c.Duration != 0 || c.Warmup != 0 || c.QPs != st.QPs(n, ranks) {
		return errors.New("a storm runs once per repetition: no --duration, --iterations, --warmup or --qps")
	}
	return nil
}

// validateStorm refuses, with the numbers, a storm the device cannot hold.
func (c *Config) validateStorm() error {
	st, n, ranks := c.Workload.Storm, c.StormNodes(), c.Procs*c.Threads
	if c.Provider != "sim" {
		return nil // a real device refuses at run time, with its errno
	}
	if ranks > verbs.DefaultSimMaxRegs {
		return fmt.Errorf("storm of %d ranks: every QP takes a handle from each rank, and the sim device allows %d per QP: lower --procs or --threads", ranks, verbs.DefaultSimMaxRegs)
	}
	// At worst, each re-wired connection keeps its first QP alive (a rank
	// registered before the teardown), gets a new one, and every other
	// rank loses the race and creates its own.
	qps := st.QPs(n, ranks)
	rewired := int(math.Round(st.Reconnect * float64(qps)))
	need := qps + rewired*ranks
	if need > c.simMaxQPs() {
		return fmt.Errorf("storm of %d nodes x %d ranks x %d rail(s) needs up to %d live QPs (%d receive QPs + %d re-wired x %d ranks), the sim device holds %d: raise --sim-max-qp or lower --nodes",
			n, ranks, st.Rails, need, qps, rewired, ranks, c.simMaxQPs())
	}
	return nil
}

// stormExitTeardown times a storm's teardown exit: from the last rank's
// exit (exited, seen at ns) until the device (named device, the one the
// run opened) lists none of the job's QPs (created: every QP number the
// ranks created). The sim device drops a dead process's handles when it
// is next opened, as the kernel does when the process ends, so this times
// that reaping and one inspection. rdma and legacy ask the kernel's RDMA
// netlink for the device's QPs (verbs.LiveQPs), where it has one.
func stormExitTeardown(vo verbs.Options, device string, created *qpSet, exited uint64) (int64, string) {
	var left func() (int, error)
	switch stormExitMethod(vo.Provider) {
	case "sim_inspect":
		left = func() (int, error) {
			snap, err := verbs.InspectSim(vo.Sim.Dir)
			if err != nil {
				return 0, fmt.Errorf("inspecting the sim device: %w", err)
			}
			return len(snap.QPs), nil
		}
	case "netlink":
		if created.len() == 0 {
			return -1, "not measurable here: the ranks reported no QP they created"
		}
		left = func() (int, error) {
			qps, err := verbs.LiveQPs(device)
			return jobQPsLeft(qps, created), err
		}
	default:
		return -1, fmt.Sprintf("not measurable here: the %s provider cannot count the device's live QPs", vo.Provider)
	}
	until := time.Now().Add(30 * time.Second)
	for {
		n, err := left()
		var ne *verbs.NetlinkError
		switch {
		case errors.As(err, &ne):
			return -1, "not measurable here: " + ne.Reason
		case err != nil:
			return -1, "not measured: " + err.Error()
		case n == 0:
			return int64(verbs.Now() - exited), ""
		case time.Now().After(until):
			return -1, fmt.Sprintf("not measured: %d QP(s) still alive 30s after the ranks exited", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// jobQPsLeft counts the listed QPs that are the job's: their numbers are
// among those the ranks created. The kernel frees a number with its QP,
// so a number listed again later is a new QP only if something else made
// one meanwhile; the 30s bound keeps that from hanging the run.
func jobQPsLeft(listed []verbs.LiveQP, created *qpSet) int {
	n := 0
	for _, q := range listed {
		if created.has(q.QPN) {
			n++
		}
	}
	return n
}

// stormExitMethod names how stormExitTeardown watches a provider's
// device (result.json's storm.teardown_method); "" where it cannot.
func stormExitMethod(provider string) string {
	switch provider {
	case "sim":
		return "sim_inspect"
	case "rdma", "legacy":
		return "netlink"
	}
	return ""
}

// stormResult gathers the storm's figures from the repetitions.
func stormResult(done []*repOutcome, cfg Config) *results.Storm {
	st, n, ranks := cfg.Workload.Storm, cfg.StormNodes(), cfg.Procs*cfg.Threads
	out := &results.Storm{Nodes: n, Ranks: ranks, Rails: st.Rails, QPs: st.QPs(n, ranks),
		Registrations: st.Registrations(n, ranks), Arrival: st.Arrival, WindowNS: int64(st.WindowDur),
		Teardown: st.Teardown, Reconnect: st.Reconnect, Creators: st.Creators,
		MakespanNS: []int64{}, RankDoneNS: [][]int64{}}
	if st.Teardown == workloads.TeardownUnreg {
		out.TeardownMethod = "ranks_unreg"
	} else {
		out.TeardownMethod = stormExitMethod(cfg.Provider)
	}
	var notes []string
	for _, rep := range done {
		doneNS, downNS := make([]int64, ranks), make([]int64, ranks)
		for i := range doneNS {
			doneNS[i], downNS[i] = -1, -1
		}
		runq := make([]int64, ranks)
		for _, tr := range rep.threads {
			if tr.Thread < 0 || tr.Thread >= ranks {
				continue
			}
			if tr.StormDoneNS != nil {
				doneNS[tr.Thread] = *tr.StormDoneNS
			}
			runq[tr.Thread] = -1
			if tr.StormRunQueueNS != nil {
				runq[tr.Thread] = *tr.StormRunQueueNS
			}
			if tr.StormTeardownNS != nil {
				downNS[tr.Thread] = *tr.StormTeardownNS
			}
		}
		makespan := slices.Max(doneNS)
		if slices.Contains(doneNS, -1) {
			makespan = -1
		}
		out.MakespanNS = append(out.MakespanNS, makespan)
		out.RankDoneNS = append(out.RankDoneNS, doneNS)
		out.RankRunQueueNS = append(out.RankRunQueueNS, runq)
		switch {
		case st.Teardown == workloads.TeardownUnreg && !slices.Contains(downNS, -1):
			out.TeardownNS = append(out.TeardownNS, slices.Max(downNS))
			out.RankTeardownNS = append(out.RankTeardownNS, downNS)
		case st.Teardown == workloads.TeardownUnreg:
			notes = append(notes, fmt.Sprintf("repetition %d: a rank did not finish its teardown", rep.index+1))
		case rep.stormExitNS >= 0:
			out.TeardownNS = append(out.TeardownNS, rep.stormExitNS)
		default:
			notes = append(notes, fmt.Sprintf("repetition %d: %s", rep.index+1, rep.stormExitNote))
		}
	}
	if len(notes) > 0 {
		// Teardown figures only when every repetition has one: a list with
		// gaps would not say which repetition each belongs to.
		out.TeardownNS, out.RankTeardownNS = nil, nil
		if out.TeardownMethod == "netlink" {
			out.TeardownMethod = "" // the note says why the kernel could not be asked
		}
		out.TeardownNote = strings.Join(notes, "; ")
		if allSame(notes) {
			out.TeardownNote = strings.SplitN(notes[0], ": ", 2)[1] // the same in every repetition
		}
	}
	return out
}

func allSame(xs []string) bool {
	for _, x := range xs {
		if strings.SplitN(x, ": ", 2)[1] != strings.SplitN(xs[0], ": ", 2)[1] {
			return false
		}
	}
	return true
}

// runQueueNS is how long the calling OS thread has waited on a run queue,
// runnable but not running (/proc/thread-self/schedstat, 2nd field), or -1
// where the kernel does not say. On a shared machine a rank's makespan
// includes that wait, which is not the storm's.
func runQueueNS() int64 {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
