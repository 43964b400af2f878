package bench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// The storm runner: each thread is one local rank of an MPI job and runs
// its plan's steps (workloads.StormPlan) once per repetition, from the
// shared start deadline, as one op program run by one C loop
// (verbs.RunStorm). A rank serves its steps in plan order, each as soon
// as it has arrived, skipping over those that have not: a step whose
// intended start has not come, or a registration whose QP number its
// creator has not sent back (published in the shared segment's slot of
// the connection): a sender contacts the rank only with that number in
// hand. Go builds the program before the start and folds the latencies
// after the C loop returns; it steps in only at an interval's end and
// when an outcome was unexpected (a registration that lost the race with
// a re-wire: the handshake restarts and the rank creates a QP of its own).

// stormRank is a thread's storm state.
type stormRank struct {
	steps  []workloads.Step
	held   []uint32          // QPs this rank holds a handle on
	doneNS int64             // completion time after the storm's start; -1 unfinished
	busyNS int64             // the rank's own work until then: its timed operations
	runqNS int64             // time it was runnable but not running until then; -1 unknown
	downNS int64             // teardown time (teardown unreg); -1 not measured
	won    []int             // connections whose election this rank won (creators elect)
	exit   bool              // teardown exit: leave the handles to the process's end
	kinds  map[string]uint32 // kind → index in thread.recs, a step's Tag
	runq   *os.File          // /proc/thread-self/schedstat, read at start and end

	// the current program (storm or teardown) and how far it is folded
	prog   *verbs.Program
	run    *verbs.Storm
	folded []bool
	idle   uint64 // run.IdleNS() already counted as waited
	fix    *verbs.Program
}

// runStorm runs the rank's storm, then its teardown.
func (t *thread) runStorm(deadline uint64) error {
	st := t.storm
	st.doneNS, st.downNS, st.runqNS, st.busyNS, st.won = -1, -1, -1, 0, nil
	if st.kinds == nil {
		st.kinds = map[string]uint32{}
		for i, r := range t.recs {
			st.kinds[r.kind] = uint32(i)
		}
	}
	t.stormBuild(deadline)
	// The makespan runs from the deadline, so what the harness does
	// after it is in the figure. The rank sleeps in Go until shortly
	// before, and the C loop waits out the rest (asleep, then spinning):
	// no Go runs from there until the rank is done. The C loop reads the
	// run-queue time at the start and after the last step, the window of
	// the rank's completion time (a wait before the start delays nothing;
	// one still going on at the start is counted from the start).
	if st.runq == nil {
		if f, err := os.Open("/proc/thread-self/schedstat"); err == nil {
			st.runq = f
		}
	}
	if st.runq != nil {
		st.run.CountRunQueue(int(st.runq.Fd()), runDelay(st.runq))
	}
	if err := waitUntil(verbs.Now, deadline-min(deadline, stormWakeEarly), t.shm.aborted); err != nil {
		return err
	}
	t.started = deadline
	if testHookMeasuring != nil {
		testHookMeasuring(t.g)
	}
	t.measuring = true
	t.lastEnd = t.started
	t.beginIntervals(deadline)
	err := t.storming(deadline)
	if st.doneNS >= 0 {
		st.runqNS = st.run.RunQueueNS()
	}
	if st.runq != nil {
		st.runq.Close()
		st.runq = nil
	}
	if err == nil && !st.exit && !t.shm.stopRequested() {
		err = t.stormTeardown()
	}
	return t.endMeasuring(err)
}

// A storm rank wakes from its sleep in Go stormWakeEarly before the start.
const stormWakeEarly = uint64(5 * time.Millisecond)

// stormBuild makes the rank's plan its program: a create (and the modify
// out of RESET that --qp-state asks) sends the number back through the
// connection's slot; a re-wire drops the rank's handle on the slot's QP
// and creates anew; a registration takes its number from the slot.
func (t *thread) stormBuild(deadline uint64) {
	st := t.storm
	n := 0
	per := 1
	if t.modify != nil {
		per = 2
	}
	for _, s := range st.steps {
		switch s.Act {
		case workloads.ActCreate:
			n += per
		case workloads.ActRewire:
			n += 1 + per
		case workloads.ActReg:
			n++
		case workloads.ActElect:
			n += per
		}
	}
	poisson := t.spec.Storm.Arrival == workloads.ArrivalPoisson
	p := verbs.NewProgram(n, poisson)
	run := verbs.NewStorm(p, t.shm.qpnTable(), t.shm.stopWord(), t.shm.abortWord(), deadline)
	i := 0
	add := func(op verbs.Op, kind string, slot int, back uint32, at time.Duration) {
		p.Steps[i] = verbs.Step{Op: uint8(op), Tag: st.kinds[kind], Back: back}
		run.Slot[i] = uint32(slot)
		if poisson {
			p.Start[i] = deadline + uint64(at)
		}
		i++
	}
	create := func(slot int, at time.Duration) {
		if t.modify == nil {
			add(verbs.OpCreate, workloads.OpCreate, slot, 0, at)
			return
		}
		// The number goes back once the QP is out of RESET.
		add(verbs.OpCreate, workloads.OpCreate, 0, 0, at)
		add(verbs.OpModify, results.OpModify, slot, 1, at)
	}
	for _, s := range st.steps {
		slot := s.Conn + 1
		switch s.Act {
		case workloads.ActCreate:
			create(slot, s.Start)
		case workloads.ActRewire:
			// The connection goes down: the creator drops its handle
			// (which destroys the QP unless a rank registered first) and
			// wires it again with a new QP, whose number replaces the old.
			add(verbs.OpUnreg, workloads.OpUnreg, slot, 0, s.Start)
			create(slot, s.Start)
		case workloads.ActReg:
			add(verbs.OpReg, workloads.OpReg, slot, 0, s.Start)
		case workloads.ActElect:
			// The C loop decides create or reg by compare-and-swap on
			// the slot; the winner's number goes back as soon as it is
			// created, as GASNet's does, so an opener's modify may race
			// the creator's: every rank moves the QP it holds, and the
			// transitions the kernel refuses because another rank made
			// them are modify_raced (stormUnexpected). Tagged as a
			// create until the fold sees which it was.
			add(verbs.OpElect, workloads.OpCreate, slot, 0, s.Start)
			if t.modify != nil {
				add(verbs.OpModify, results.OpModify, 0, 1, s.Start)
			}
		}
	}
	st.prog, st.run, st.folded, st.idle = p, run, make([]bool, n), 0
}

// storming runs the rank's program until every step is done or the run
// is stopped.
func (t *thread) storming(start uint64) error {
	st := t.storm
	for {
		st.run.Until = t.ivNext
		out, err := t.dom.RunStorm(st.prog, st.run)
		if err != nil {
			return fmt.Errorf("thread %d: storm: %w", t.g, err)
		}
		switch out {
		case verbs.StormDone:
			if err := t.stormFold(); err != nil {
				return err
			}
			st.doneNS = int64(max(st.run.End(), start) - start) // 0 for a rank with nothing to do
			return nil
		case verbs.StormUntil:
			if err := t.stormFold(); err != nil {
				return err
			}
			if err := t.flushIntervalAt(verbs.Now()); err != nil {
				return err
			}
		case verbs.StormHalted:
			if err := t.stormFold(); err != nil {
				return err
			}
			if t.shm.aborted() {
				return ErrAborted
			}
			return nil
		case verbs.StormUnexpected:
			if err := t.stormUnexpected(st.run.At()); err != nil {
				return err
			}
		}
	}
}

// stormUnexpected handles step i's unexpected outcome: a registration
// that found its QP destroyed (EINVAL) while connections are re-wired
// lost the race: the sender restarts the handshake and this rank creates
// a receive QP of its own. With elected creators, a modify refused with
// EINVAL found the shared QP already moved by another rank: GASNet's
// gasnetc_xrc_modify_qp tolerates that ("just a race against another
// process") once a query shows the state at or past the one asked; the
// engine has no query on every provider, and this rank holds the QP, so
// a refused transition is the only EINVAL a modify can have here (the
// known answer, modify_raced = (ranks-1) x QPs at rtr on sim, checks
// that). Anything else fails the rank.
func (t *thread) stormUnexpected(i int) error {
	st := t.storm
	p := st.prog
	s := &p.Steps[i]
	e := st.run.Errno(i)
	if verbs.Op(s.Op) == verbs.OpModify && e == syscall.EINVAL && t.spec.Storm.Creators == workloads.CreatorsElect {
		s.Tag, s.Expect = st.kinds[results.OpModifyRaced], uint16(syscall.EINVAL)
		return t.stormFold()
	}
	if verbs.Op(s.Op) != verbs.OpReg || e != syscall.EINVAL || t.spec.Storm.Reconnect <= 0 {
		if err := t.stormFold(); err != nil {
			return err
		}
		return fmt.Errorf("thread %d: %s of QP %#x (connection %d): %w", t.g, verbs.Op(s.Op), s.QPN, st.run.Slot[i]-1, e)
	}
	s.Tag, s.Expect = st.kinds[workloads.OpRegRetry], uint16(syscall.EINVAL)
	if err := t.stormFold(); err != nil {
		return err
	}
	if st.fix == nil {
		n := 1
		if t.modify != nil {
			n = 2
		}
		st.fix = verbs.NewProgram(n, false)
	}
	f := st.fix
	f.Steps[0] = verbs.Step{Op: uint8(verbs.OpCreate), Tag: st.kinds[workloads.OpRestart]}
	if t.modify != nil {
		f.Steps[1] = verbs.Step{Op: uint8(verbs.OpModify), Tag: st.kinds[results.OpModify], Back: 1}
	}
	run := verbs.NewStorm(f, nil, t.shm.stopWord(), t.shm.abortWord(), 0)
	out, err := t.dom.RunStorm(f, run)
	if err != nil {
		return fmt.Errorf("thread %d: restart: %w", t.g, err)
	}
	// Folded as part of the storm: the restart is the rank's own work.
	t.stormFoldOf(f, run, make([]bool, f.Len()))
	if out != verbs.StormDone {
		if out == verbs.StormHalted && !t.shm.aborted() {
			return nil
		}
		if out == verbs.StormHalted {
			return ErrAborted
		}
		return fmt.Errorf("thread %d: restart's %s: %w", t.g, verbs.Op(f.Steps[run.At()].Op), run.Errno(run.At()))
	}
	return nil
}

// stormFold records the steps of the current program done since the last
// fold.
func (t *thread) stormFold() error {
	st := t.storm
	t.stormFoldOf(st.prog, st.run, st.folded)
	// The time with nothing arrived is the workload's wait, like a
	// barrier's.
	w := st.run.IdleNS() - st.idle
	st.idle = st.run.IdleNS()
	t.waited += w
	t.waitNS += w
	return nil
}

// stormFoldOf records the done steps of p not yet folded: latencies into
// their kinds' interval counts, failures as errors of their kinds, and
// the rank's handles; an unreg that destroyed its QP is an unreg_last.
func (t *thread) stormFoldOf(p *verbs.Program, run *verbs.Storm, folded []bool) {
	st := t.storm
	var timed uint64
	var last *kindRec
	batch := map[*kindRec]bool{}
	for i := range p.Steps {
		if !run.Done[i] || folded[i] {
			continue
		}
		folded[i] = true
		s := &p.Steps[i]
		e := run.Errno(i)
		if verbs.Op(s.Op) == verbs.OpUnreg && e == 0 && run.Destroyed(i) == verbs.WasDestroyed {
			s.Tag = st.kinds[workloads.OpUnregLast]
		}
		if verbs.Op(s.Op) == verbs.OpReg && s.Tag == st.kinds[workloads.OpCreate] {
			s.Tag = st.kinds[workloads.OpReg] // an election lost: the rank opened the winner's QP
		}
		rec := t.recs[s.Tag]
		ns := run.NS[i]
		rec.iv[bucketIndex(ns, len(rec.iv))]++
		rec.ivN++
		rec.count++
		rec.timedNS += int64(ns)
		batch[rec] = true
		timed += ns
		st.busyNS += int64(ns)
		last = rec
		if run.Unexpected(p, i) {
			rec.fail(workloads.ErrnoName(e))
		}
		if e != 0 {
			continue
		}
		switch verbs.Op(s.Op) {
		case verbs.OpCreate:
			st.held = append(st.held, s.QPN)
			t.noteCreated(s.QPN)
			if t.spec.Storm.Creators == workloads.CreatorsElect && run.Slot[i] > 0 {
				// An election won (every storm step is one there): the
				// critical path replays the run's winners.
				st.won = append(st.won, int(run.Slot[i])-1)
			}
		case verbs.OpReg:
			st.held = append(st.held, s.QPN)
		case verbs.OpUnreg:
			if k := slices.Index(st.held, s.QPN); k >= 0 {
				st.held = slices.Delete(st.held, k, k+1)
			}
		}
	}
	for rec := range batch {
		rec.batches++
	}
	if last != nil && t.measuring {
		t.account(last, run.End(), timed, nil)
	}
}

// stormTeardown: every rank unregisters everything it holds (MVAPICH's
// finalize), from a common start after every rank is wired, as one
// program.
func (t *thread) stormTeardown() error {
	margin := uint64(5*time.Millisecond + time.Duration(t.n)*100*time.Microsecond)
	if err := t.barrier(func() { t.shm.setDeadline(verbs.Now() + margin) }); err != nil {
		return err
	}
	// Waiting for the common start (in the C loop) is the workload's, as
	// a barrier's.
	start, t0 := t.shm.deadline(), verbs.Now()
	w := start - min(start, t0)
	t.waited += w
	t.waitNS += w
	st := t.storm
	p := verbs.NewProgram(len(st.held), false)
	for i, q := range slices.Backward(st.held) {
		p.Steps[len(st.held)-1-i] = verbs.Step{QPN: q, Op: uint8(verbs.OpUnreg), Tag: st.kinds[workloads.OpUnreg]}
	}
	st.prog, st.run, st.folded, st.idle = p, verbs.NewStorm(p, nil, t.shm.stopWord(), t.shm.abortWord(), start), make([]bool, p.Len()), 0
	busy := st.busyNS
	defer func() { st.busyNS = busy }()
	for {
		st.run.Until = t.ivNext
		out, err := t.dom.RunStorm(p, st.run)
		if err != nil {
			return fmt.Errorf("thread %d: storm teardown: %w", t.g, err)
		}
		if err := t.stormFold(); err != nil {
			return err
		}
		switch out {
		case verbs.StormDone:
			st.downNS = int64(max(st.run.End(), start) - start)
			return nil
		case verbs.StormUntil:
			if err := t.flushIntervalAt(verbs.Now()); err != nil {
				return err
			}
		case verbs.StormHalted:
			if t.shm.aborted() {
				return ErrAborted
			}
			return nil
		case verbs.StormUnexpected:
			i := st.run.At()
			return fmt.Errorf("thread %d: unreg of QP %#x: %w", t.g, p.Steps[i].QPN, st.run.Errno(i))
		}
	}
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
		out.TeardownMethod = leaks.ExitMethod(cfg.Provider)
	}
	var notes []string
	// The plan the workers drew (checkWorkerConfig): the same seed, so
	// the same plan.
	plan, modify := st.Plan(n, ranks, cfg.Seed), modifies(cfg.Workload, cfg.QPState)
	elect := st.Creators == workloads.CreatorsElect
	for _, rep := range done {
		doneNS, downNS := make([]int64, ranks), make([]int64, ranks)
		for i := range doneNS {
			doneNS[i], downNS[i] = -1, -1
		}
		runq, busy := make([]int64, ranks), make([]int64, ranks)
		for _, tr := range rep.threads {
			if tr.Thread < 0 || tr.Thread >= ranks {
				continue
			}
			if tr.StormDoneNS != nil {
				doneNS[tr.Thread] = *tr.StormDoneNS
			}
			runq[tr.Thread], busy[tr.Thread] = -1, -1
			if tr.StormRunQueueNS != nil {
				runq[tr.Thread] = *tr.StormRunQueueNS
			}
			if tr.StormBusyNS != nil && tr.StormDoneNS != nil && *tr.StormDoneNS >= 0 {
				busy[tr.Thread] = *tr.StormBusyNS
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
		out.RankBusyNS = append(out.RankBusyNS, busy)
		var won []int // nil: no elections
		if elect {
			won = make([]int, plan.QPs)
			for i := range won {
				won[i] = -1
			}
			for _, tr := range rep.threads {
				for _, c := range tr.StormWon {
					if c >= 0 && c < len(won) && tr.Thread >= 0 && tr.Thread < ranks {
						won[c] = tr.Thread
					}
				}
			}
		}
		out.CriticalPathNS = append(out.CriticalPathNS, stormCriticalPath(plan, modify, won, rep.threads, ranks))
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

// maxReplaySteps bounds the plans whose critical path is replayed: the
// replay of 16 ranks x 1000 nodes (256k steps) took 0.1-0.5 s on the
// development VM, once per repetition; a storm of millions of steps would
// add minutes to its result. Past it critical_path_ns is -1.
var maxReplaySteps = 2_000_000 // a variable for its test

// stormCriticalPath is one repetition's critical path: the plan replayed
// with each rank's measured mean cost per op kind (its timed_ns over its
// count), -1 when a rank did not report. A rank's own mean and not the
// repetition's: the replayed ranks then do, each, the own work they were
// measured to do (their rank_busy_ns), so what the makespan has beyond
// the critical path is the waits the plan did not make, not a slow rank's
// operations spread over the fast ones. A kind a rank never ran (an
// election it won in the replay but lost in the run) costs the mean over
// all ranks. With creators elect the run's winners create (won, from the
// ranks' reports). The unreg of a re-wire costs the rank's mean unreg, which
// includes the teardown's (one record holds both).
func stormCriticalPath(plan *workloads.StormPlan, modify bool, won []int, threads []threadResult, ranks int) int64 {
	steps := 0
	for _, r := range plan.Ranks {
		steps += len(r)
	}
	if steps > maxReplaySteps {
		return -1
	}
	type sum struct{ ns, n int64 }
	per := make([]map[string]sum, ranks)
	all := map[string]sum{}
	add := func(m map[string]sum, kind string, k kindResult) {
		s := m[kind]
		s.ns += k.TimedNS
		s.n += k.Count // timed_ns holds every one counted, failed or not
		m[kind] = s
	}
	for _, tr := range threads {
		if tr.Thread < 0 || tr.Thread >= ranks {
			continue
		}
		per[tr.Thread] = map[string]sum{}
		for kind, k := range tr.Kinds {
			if kind == workloads.OpUnregLast {
				kind = workloads.OpUnreg // a re-wire's unreg is either
			}
			add(per[tr.Thread], kind, k)
			add(all, kind, k)
		}
	}
	for _, m := range per {
		if m == nil {
			return -1
		}
	}
	mean := func(s sum) (int64, bool) {
		if s.n <= 0 {
			return 0, false
		}
		return s.ns / s.n, true
	}
	cp, _ := plan.CriticalPath(modify, won, func(r int, kind string) int64 {
		if v, ok := mean(per[r][kind]); ok {
			return v
		}
		if kind == results.OpModifyRaced {
			kind = results.OpModify
		}
		v, _ := mean(all[kind])
		return v
	})
	return cp
}

// runDelay is the thread's time on a run queue so far, ns, from its open
// /proc/thread-self/schedstat (2nd field), or -1 where unreadable.
func runDelay(f *os.File) int64 {
	var buf [128]byte
	n, err := f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return -1
	}
	fs := strings.Fields(string(buf[:n]))
	if len(fs) < 2 {
		return -1
	}
	v, err := strconv.ParseInt(fs[1], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

func allSame(xs []string) bool {
	for _, x := range xs {
		if strings.SplitN(x, ": ", 2)[1] != strings.SplitN(xs[0], ": ", 2)[1] {
			return false
		}
	}
	return true
}
