package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

type coordinator struct {
	cfg   Config
	opts  Options
	priv  string
	logs  *hlogs
	errMu sync.Mutex    // serialises writes to opts.Stderr
	live  *live         // the current repetition's progress
	ticks host.CPUTicks // CPU times at the run's start, for the CPU check
}

// repOutcome is what one repetition measured.
type repOutcome struct {
	index    int
	info     verbs.DeviceInfo
	threads  []threadResult
	workers  []*workerProc
	wall     time.Duration
	skew     int64
	minStart uint64                             // earliest thread start, CLOCK_MONOTONIC ns
	measured bool                               // every thread reported: usable even with an error
	hists    map[string]*hdrhistogram.Histogram // latency per op kind, from the intervals
	created  *leaks.Set                         // QP numbers the threads created, when probed
	leaks    *results.LeakCheck
	// A storm with teardown exit: from the last rank's exit until the
	// device showed none of the job's QPs (-1: not measured, and why).
	stormExitNS   int64
	stormExitNote string
	warnings      []results.Warning
}

// workerProc is one worker process as the coordinator sees it.
type workerProc struct {
	index   int
	threads int
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	fw      *frameWriter
	pid     int
	cpus    []int
	ready   bool
	done    *doneMsg
	failMsg string // what the worker said when it failed
	// crash is the first line of the Go runtime's fatal error, if it
	// died of one: set by the stderr reader, read by describe.
	crash   atomic.Pointer[string]
	exited  bool
	state   *os.ProcessState
	readErr error
	// lastSeen is when the coordinator last heard from it: a worker
	// silent for the stall timeout is stalled (stopped, wedged).
	lastSeen time.Time
}

type event struct {
	w    *workerProc
	msg  *message
	exit bool // the worker's stdout ended and the process was reaped
}

// name identifies a worker in messages: index and pid.
func (w *workerProc) name() string { return fmt.Sprintf("worker %d (pid %d)", w.index, w.pid) }

// describe says why a worker stopped before finishing.
func (w *workerProc) describe() string {
	// A runtime's abort says why the rest failed (a broken pipe, an
	// exit status 2).
	if c := w.crash.Load(); c != nil {
		return fmt.Sprintf("%s died: %s%s", w.name(), *c, crashHint(*c))
	}
	switch {
	case w.failMsg != "":
		return w.name() + " failed: " + w.failMsg
	case errors.Is(w.readErr, errProto):
		return fmt.Sprintf("%s: reading its messages: %v (%s)", w.name(), w.readErr, w.exitString())
	case w.state == nil:
		return w.name() + " stopped answering"
	}
	if ws, ok := w.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("%s was killed by signal %d (%v)", w.name(), int(ws.Signal()), ws.Signal())
	}
	if w.state.ExitCode() == 0 {
		return w.name() + " exited before reporting its results"
	}
	return fmt.Sprintf("%s exited with status %d", w.name(), w.state.ExitCode())
}

func (w *workerProc) exitString() string {
	if w.state == nil {
		return ""
	}
	if w.state.Success() {
		return "ok"
	}
	return w.state.String()
}

// repetition runs the whole configuration once, with fresh worker
// processes and a fresh device directory, so repetitions are independent:
// the holder prepares the QPs, the workers start, get ready, measure from
// a common deadline and exit; what they measured becomes the outcome, and
// the holder's release and the leak probe come last.
func (c *coordinator) repetition(ctx context.Context, idx int) (*repOutcome, error) {
	out := &repOutcome{index: idx, stormExitNS: -1}
	c.live = newLive(&c.cfg, idx)
	tick, stopTick := c.progressTicker()
	defer stopTick()
	dir := filepath.Join(c.priv, fmt.Sprintf("rep%d", idx+1))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return out, err
	}
	vo := c.repVerbs(dir)
	total := c.cfg.Procs * c.cfg.Threads
	h, err := openHolder(vo, filepath.Join(dir, "domain"), filepath.Join(dir, "foreign"), c.cfg.Workload, c.cfg.QPs, total)
	if err != nil {
		return out, err
	}
	out.info = h.dev.Info()
	defer c.releaseHolder(out, vo, h)
	sh, err := createShm(filepath.Join(dir, "barrier"), total, c.cfg.QPs)
	if err != nil {
		return out, err
	}
	defer sh.close()

	r := c.newRepRun(out, sh, tick)
	defer r.stallCheck.Stop()
	if err := r.spawnWorkers(vo, h, dir); err != nil {
		return out, err
	}
	c.report(c.live, nil, true)
	if err := r.awaitReady(ctx); err != nil {
		return r.fail(err)
	}
	margin, err := r.start()
	if err != nil {
		return r.fail(err)
	}
	if err := r.measure(ctx, margin); err != nil {
		return r.fail(err)
	}
	if err := r.conclude(vo); err != nil {
		return out, err
	}
	c.reportDone(c.live, out)
	return out, r.stopErr
}

// progressTicker paces the live display's redraws; without a display it
// never ticks.
func (c *coordinator) progressTicker() (<-chan time.Time, func()) {
	if c.opts.Progress == nil {
		return nil, func() {}
	}
	t := time.NewTicker(time.Second)
	return t.C, t.Stop
}

// repVerbs is how the repetition's processes open the device: a sim
// device lives in the repetition's own directory.
func (c *coordinator) repVerbs(dir string) verbs.Options {
	cfg := &c.cfg
	return verbs.Options{Provider: cfg.Provider, Device: cfg.Device, QPState: cfg.QPState, Port: cfg.IBPort, GIDIndex: cfg.GIDIndex,
		Sim: verbs.SimOptions{Dir: filepath.Join(dir, "sim"), Semantics: cfg.semantics(), Cost: cfg.SimCost, MaxQPs: cfg.SimMaxQPs}}
}

// releaseHolder releases the holder's QPs, then probes for QPs left
// behind; a failed release is a warning, since the measurement stands.
func (c *coordinator) releaseHolder(out *repOutcome, vo verbs.Options, h *holder) {
	// rdma: the QPs the threads destroyed must be gone from the device
	// while the holder still holds the domain, which keeps a QP whose
	// destroy failed (its release could have the kernel retry it).
	var listed []uint32
	var how string
	listErr := errors.New("the holder has no device")
	if vo.Provider == "rdma" && h.dev != nil {
		listed, how, listErr = leaks.StillListed(h.dev.Info(), out.created.Each)
	}
	if err := h.release(); err != nil {
		out.warnings = append(out.warnings, warnf(results.WarnHolderRelease, out.index+1, "", "the QPs it held may outlive the run (see the leak check); look at the device with xrcbench devices", "releasing the holder: %v", err))
	}
	out.leaks = leaks.Check(vo, h.made(), out.created, len(out.threads) == c.cfg.Procs*c.cfg.Threads)
	if vo.Provider == "rdma" && out.leaks != nil && out.leaks.Method == "reg_probe" {
		leaks.AddUnconfirmed(out.leaks, listed, how, listErr)
	}
	if lc := out.leaks; lc != nil && lc.DestroysUnconfirmed != nil && *lc.DestroysUnconfirmed > 0 {
		out.warnings = append(out.warnings, warnf(results.WarnDestroyUnconfirmed, out.index+1, "", "a destroy the kernel did not report: unreg_last may not hold the destruction, and a later ibv_close_xrcd may fail EBUSY",
			"%d QP destruction(s) not confirmed: ibv_destroy_qp returned 0, but %s still lists QP(s) %v",
			*lc.DestroysUnconfirmed, lc.DeviceList, lc.UnconfirmedQPNs))
	}
}

// repRun is one repetition in flight: its workers, the barrier segment
// they share, the events they send, and whether (and why) the run is being
// stopped early.
type repRun struct {
	c            *coordinator
	out          *repOutcome
	sh           *shm
	events       chan event
	workers      []*workerProc
	tick         <-chan time.Time // live display redraws
	stallTimeout time.Duration
	stallCheck   *time.Ticker

	// A run stopped early (^C, a stalled worker) is drained: the workers
	// still running are asked to stop, and what was measured is kept.
	// stopErr says why.
	stopErr  error
	draining bool
	stopAt   uint64           // when the drain began, CLOCK_MONOTONIC ns
	grace    <-chan time.Time // the drain's end: then stragglers are killed
	lastExit uint64           // when the last worker's exit was seen
	// lastCheck is the last stall check's time (see stalled).
	lastCheck time.Time
}

func (c *coordinator) newRepRun(out *repOutcome, sh *shm, tick <-chan time.Time) *repRun {
	stallTimeout := c.cfg.stallTimeout()
	return &repRun{c: c, out: out, sh: sh, tick: tick,
		events:       make(chan event, 16*c.cfg.Procs),
		stallTimeout: stallTimeout,
		stallCheck:   time.NewTicker(min(stallTimeout/4, time.Second)),
	}
}

// fail stops every worker still running and fails the repetition.
func (r *repRun) fail(err error) (*repOutcome, error) {
	r.c.stop(r.sh, r.workers, r.events)
	return r.out, err
}

// spawnWorkers starts the worker processes; if one cannot be started,
// those already started are stopped.
func (r *repRun) spawnWorkers(vo verbs.Options, h *holder, dir string) error {
	for p := 0; p < r.c.cfg.Procs; p++ {
		w, err := r.c.spawn(p, r.c.workerConfig(p, vo, h, dir), r.events)
		if err != nil {
			r.c.stop(r.sh, r.workers, r.events)
			return fmt.Errorf("starting worker %d: %w", p, err)
		}
		r.workers = append(r.workers, w)
	}
	r.out.workers = r.workers
	return nil
}

// workerConfig is worker p's share of the run.
func (c *coordinator) workerConfig(p int, vo verbs.Options, h *holder, dir string) *workerConfig {
	cfg := &c.cfg
	wc := &workerConfig{
		Index: p, ThreadBase: p * cfg.Threads, Threads: cfg.Threads, TotalThreads: cfg.Procs * cfg.Threads,
		Verbs: vo, Domain: h.domain, Shm: filepath.Join(dir, "barrier"),
		WorkloadSpec: cfg.Workload.Source, WorkloadFile: cfg.Workload.File,
		QPs: cfg.QPs, Duration: cfg.Duration, Iterations: cfg.Iterations, Warmup: cfg.Warmup,
		Interval: cfg.Interval, Seed: cfg.Seed, RealTime: host.StartRealTime(),
		BatchOps: cfg.BatchOps, BatchTime: cfg.BatchTime, Rate: cfg.threadRate(), Arrival: cfg.arrival(),
		Wait: cfg.openWait(host.StartRealTime()),
		Held: h.held, Invalid: h.invalid, Foreign: h.foreign,
	}
	numa := -1 // the device's NUMA node, where the holder has one open
	if h.dev != nil {
		numa = h.dev.Info().NUMANode
	}
	if cpus := cfg.threadCPUs(numa); cpus != nil {
		wc.CPUs = cpus[wc.ThreadBase : wc.ThreadBase+wc.Threads]
	}
	if cfg.Workload.Mode == workloads.StormMode {
		wc.StormNodes = cfg.StormNodes()
	}
	return wc
}

// awaitReady waits until every worker reports ready, which it does once
// all its threads hold their registrant; a worker failing, dying or
// falling silent here fails the repetition.
func (r *repRun) awaitReady(ctx context.Context) error {
	readyBy := time.NewTimer(60*time.Second + time.Duration(r.c.cfg.Procs)*time.Second)
	defer readyBy.Stop()
	for nready := 0; nready < len(r.workers); {
		select {
		case ev := <-r.events:
			if err := r.c.handle(ev, r.out, false); err != nil {
				return err
			}
			if ev.msg != nil && ev.msg.Type == msgReady {
				nready++
			}
		case <-r.tick:
			r.c.report(r.c.live, nil, false)
		case <-r.stallCheck.C:
			if w := r.stalled(); w != nil {
				return stallError(w, r.stallTimeout, "before the start")
			}
		case <-readyBy.C:
			return errors.New("workers did not get ready within a minute")
		case <-ctx.Done():
			return fmt.Errorf("interrupted (%v) before the start", context.Cause(ctx))
		}
	}
	return nil
}

// startMargin is how far ahead of now the measurement starts: time for
// every worker to read the start and every thread to reach the deadline.
func startMargin(procs, threads int) time.Duration {
	return 50*time.Millisecond + time.Duration(procs)*5*time.Millisecond + time.Duration(threads)*100*time.Microsecond
}

// start sets the common deadline and sends it to every worker; it returns
// the margin the deadline was set ahead by.
func (r *repRun) start() (time.Duration, error) {
	total := r.c.cfg.Procs * r.c.cfg.Threads
	margin := startMargin(r.c.cfg.Procs, total)
	deadline := verbs.Now() + uint64(margin)
	r.sh.setDeadline(deadline)
	r.c.logs.startRep(total)
	r.c.live.start = deadline
	r.c.report(r.c.live, r.sh, true)
	for _, w := range r.workers {
		if err := w.fw.write(&message{Type: msgStart, Start: &startMsg{Deadline: deadline}}); err != nil {
			return margin, fmt.Errorf("%s: sending the start: %w", w.name(), err)
		}
	}
	return margin, nil
}

// measure follows the workers until every one has exited. A stalled worker
// or an interrupt drains the run; an error fails the repetition.
func (r *repRun) measure(ctx context.Context, margin time.Duration) error {
	var watchdog <-chan time.Time
	if cfg := &r.c.cfg; cfg.Duration > 0 {
		// A duration run that overstays this much is wedged.
		t := time.NewTimer(margin + cfg.Warmup + cfg.Duration + 60*time.Second)
		defer t.Stop()
		watchdog = t.C
	}
	interrupt := ctx.Done()
	for pending := len(r.workers); pending > 0; {
		select {
		case ev := <-r.events:
			if ev.exit {
				r.stopKilled(ev.w)
			}
			if err := r.c.handle(ev, r.out, r.draining); err != nil {
				return err
			}
			if ev.exit {
				pending--
				r.lastExit = verbs.Now()
			}
		case <-r.tick:
			r.c.report(r.c.live, r.sh, false)
		case <-r.stallCheck.C:
			r.stopStalled()
		case <-watchdog:
			return errors.New("the run did not finish within a minute of its planned end")
		case <-interrupt:
			// Stop now: threads end their pass or round and report what
			// they measured, which the result keeps as partial.
			interrupt = nil
			r.stopErr = fmt.Errorf("interrupted (%v): measured until then", context.Cause(ctx))
			r.drain(false, time.Second)
		case <-r.grace:
			r.grace = nil
			r.killStragglers()
		}
	}
	return nil
}

// stopStalled kills a worker silent for the stall timeout and drains the
// run, keeping the other workers' measurements.
func (r *repRun) stopStalled() {
	w := r.stalled()
	if w == nil || r.draining {
		return
	}
	r.stopErr = stallError(w, r.stallTimeout, "the other workers' measurements are kept")
	w.cmd.Process.Kill()
	// Threads of a rounds workload would wait for the stalled worker's at
	// their next barrier: they stop at once; loop threads end their pass
	// and send their counts.
	r.drain(r.c.cfg.Workload.Mode == workloads.Rounds, 5*time.Second)
}

// stopKilled drains the run when w, not yet drained nor done, was killed
// by a signal (the OOM killer's SIGKILL, say): as for a stalled worker, the
// other workers' measurements are kept, and its own until then; the run
// ends partial, naming it and the signal. Before, its death failed the
// repetition and dropped every worker's data.
func (r *repRun) stopKilled(w *workerProc) {
	if r.draining || w.done != nil || w.state == nil {
		return
	}
	ws, ok := w.state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return
	}
	r.stopErr = fmt.Errorf("%s was killed by signal %d (%v): the run was stopped; the other workers' measurements are kept", w.name(), int(ws.Signal()), ws.Signal())
	r.drain(r.c.cfg.Workload.Mode == workloads.Rounds, 5*time.Second)
}

// drain asks every thread to stop (at once, with abortNow) and gives them
// wait to send what they measured.
func (r *repRun) drain(abortNow bool, wait time.Duration) {
	r.draining, r.stopAt = true, verbs.Now()
	r.sh.requestStop()
	if abortNow {
		r.sh.abort()
	}
	r.grace = time.After(wait)
}

// killStragglers ends the drain: what has not ended by now is stuck in a
// long operation or at a barrier, so the barrier is aborted and the
// workers still running are killed. What they sent is kept.
func (r *repRun) killStragglers() {
	r.sh.abort()
	for _, w := range r.workers {
		if !w.exited {
			w.cmd.Process.Kill()
		}
	}
}

// conclude turns what the workers sent into the outcome: the latency
// totals, the counts of threads stopped early, the threads' common span and
// a storm's teardown time. Results missing for a thread fail the
// repetition.
func (r *repRun) conclude(vo verbs.Options) error {
	c, out := r.c, r.out
	if r.draining {
		c.keepReported(out, r.workers, r.sh.deadline(), r.stopAt)
	}
	// The logs cover the time the repetition's ops/s divide by.
	minStart, maxStart, maxEnd := threadSpan(out.threads)
	c.logs.endRep(minStart, maxEnd)
	out.hists = c.logs.totals
	if c.logs.late > 0 {
		out.warnings = append(out.warnings, lateReportsWarning(out.index, c.logs.late))
	}
	if total := c.cfg.Procs * c.cfg.Threads; len(out.threads) != total {
		return fmt.Errorf("got results of %d threads, want %d", len(out.threads), total)
	}
	out.wall = time.Duration(maxEnd - minStart)
	out.skew = int64(maxStart - minStart)
	out.minStart = minStart
	out.measured = true
	out.stormExitNS, out.stormExitNote = r.stormExit(vo)
	return nil
}

func lateReportsWarning(idx int, late int64) results.Warning {
	// A notice: the latencies are all in the timelines, at their
	// interval's start time; only the lines' order tells of the lag.
	return results.NewWarning(results.WarnLateReports, results.SeverityNotice, idx+1, "", fmt.Sprintf("%d interval report(s) came after their interval was written to the .hlog timelines (a thread lagged by more than two intervals, e.g. stopped or starved)",
		late)).WithMeans("they are written late, as extra lines with their interval's start time; no latency is lost")
}

// threadSpan is the earliest and latest start and the latest end of the
// threads' measurements: the wall time runs from the first start to the
// last end, the skew from the first start to the last.
func threadSpan(threads []threadResult) (minStart, maxStart, maxEnd uint64) {
	for i, tr := range threads {
		if i == 0 || tr.Started < minStart {
			minStart = tr.Started
		}
		maxStart = max(maxStart, tr.Started)
		maxEnd = max(maxEnd, tr.Ended)
	}
	return minStart, maxStart, maxEnd
}

// stormExit is a storm with teardown exit's time from the last rank's exit
// until the device showed none of the job's QPs; -1 and why when not
// measured.
func (r *repRun) stormExit(vo verbs.Options) (int64, string) {
	w := r.c.cfg.Workload
	if w.Mode != workloads.StormMode || w.Storm.Teardown != workloads.TeardownExit {
		return -1, ""
	}
	if r.draining {
		return -1, "the run was stopped"
	}
	// The job's QPs: every number the ranks created, on the device the
	// repetition opened.
	return leaks.ExitTeardown(vo, r.out.info.Name, r.out.created, r.lastExit)
}

// keepReported stands in for the final counts of the threads whose workers
// were stopped before sending them: the latencies they reported interval
// by interval, over the time from the measurement start to the stop.
func (c *coordinator) keepReported(out *repOutcome, workers []*workerProc, start, stop uint64) {
	have := map[int]bool{}
	for _, tr := range out.threads {
		have[tr.Thread] = true
	}
	for _, w := range workers {
		for i := 0; i < w.threads; i++ {
			g := w.index*c.cfg.Threads + i
			if have[g] {
				continue
			}
			tr := threadResult{Thread: g, CPU: -1, Started: start, Ended: max(start, stop), Kinds: map[string]kindResult{}}
			if i < len(w.cpus) {
				tr.CPU = w.cpus[i]
			}
			for _, kind := range c.cfg.Kinds() {
				tr.Kinds[kind] = kindResult{Count: c.logs.reported[g][kind]}
			}
			out.threads = append(out.threads, tr)
		}
	}
}

// stalled is a worker silent for the stall timeout, if any, counted in
// the time the coordinator itself ran. A coordinator that did not run
// between two checks (stopped with SIGSTOP until SIGCONT, or starved)
// read nothing meanwhile: what its workers sent waits unread in its pipes,
// so their silence is counted afresh from now. And a worker that is a
// zombie has exited: its last messages and its exit are on their way. A
// coordinator stopped for 12 s once blamed a worker that had finished
// normally ("sent nothing for 10s (state Z, a zombie)").
func (r *repRun) stalled() *workerProc {
	now := time.Now()
	period := min(r.stallTimeout/4, time.Second)
	if !r.lastCheck.IsZero() && now.Sub(r.lastCheck) > 2*period+time.Second {
		for _, w := range r.workers {
			w.lastSeen = now
		}
	}
	r.lastCheck = now
	w := stalledWorker(r.workers, r.stallTimeout)
	if w != nil && strings.HasPrefix(procState(w.pid), "state Z") {
		return nil
	}
	return w
}

// stalledWorker is a worker still running that has said nothing for
// timeout, if any.
func stalledWorker(workers []*workerProc, timeout time.Duration) *workerProc {
	for _, w := range workers {
		if !w.exited && w.done == nil && time.Since(w.lastSeen) > timeout {
			return w
		}
	}
	return nil
}

func stallError(w *workerProc, timeout time.Duration, what string) error {
	return fmt.Errorf("%s sent nothing for %v (%s): the run was stopped; %s (--stall-timeout)", w.name(), timeout, procState(w.pid), what)
}

// procState is the kernel's state of pid, as ps shows it.
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "state unknown: " + err.Error()
	}
	st, ok := statState(data)
	if !ok {
		return "state unknown"
	}
	names := map[byte]string{'R': "running", 'S': "sleeping", 'D': "in uninterruptible sleep", 'T': "stopped",
		't': "stopped by a tracer", 'Z': "a zombie", 'X': "dead", 'I': "idle"}
	if n, ok := names[st]; ok {
		return fmt.Sprintf("state %c, %s", st, n)
	}
	return fmt.Sprintf("state %c", st)
}

// statState is the state letter of a /proc stat file's text: the field
// after the command name's closing parenthesis (the name may hold any).
func statState(data []byte) (byte, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0, false
	}
	return data[i+2], true
}

// handle processes one event; an error fails the repetition.
// While the run is drained (stopped early), a worker that ends without
// its results, or says it failed, is expected: what it sent is kept.
func (c *coordinator) handle(ev event, out *repOutcome, draining bool) error {
	w := ev.w
	if ev.exit {
		w.exited = true
		if draining && (w.done == nil || !w.state.Success()) {
			return nil
		}
		if w.done == nil {
			return errors.New(w.describe())
		}
		if !w.state.Success() {
			return fmt.Errorf("%s reported its results but then %s", w.name(), w.state)
		}
		return nil
	}
	m := ev.msg
	w.lastSeen = time.Now()
	switch m.Type {
	case msgAlive:
	case msgReady:
		if w.ready || m.Ready == nil || len(m.Ready.CPUs) != w.threads {
			return fmt.Errorf("%s: %w: bad ready message", w.name(), errProto)
		}
		if m.Ready.Build != BuildID() {
			return fmt.Errorf("%s is another build of xrcbench (version %q, build id %q) than its coordinator (version %q, build id %q): it would measure another program; was the binary replaced during the run?",
				w.name(), m.Ready.Version, m.Ready.Build, host.Version(), BuildID())
		}
		w.ready, w.cpus = true, m.Ready.CPUs
	case msgInterval:
		if m.Interval == nil {
			return fmt.Errorf("%s: %w: empty interval message", w.name(), errProto)
		}
		if err := c.logs.add(m.Interval); err != nil {
			return fmt.Errorf("%s: %w", w.name(), err)
		}
		if c.live != nil {
			c.live.interval(m.Interval)
		}
	case msgDone:
		if w.done != nil || m.Done == nil || len(m.Done.Threads) != w.threads {
			return fmt.Errorf("%s: %w: bad done message", w.name(), errProto)
		}
		w.done = m.Done
		out.threads = append(out.threads, m.Done.Threads...)
		out.created = out.created.Union(m.Done.Created)
		c.logs.threadsDone(m.Done.Threads)
	case msgError:
		w.failMsg = m.Error
		if draining {
			return nil
		}
		return errors.New(w.describe())
	default:
		return fmt.Errorf("%s: %w: unexpected message %q", w.name(), errProto, m.Type)
	}
	return nil
}

// spawn starts worker p and sends it its configuration.
func (c *coordinator) spawn(p int, wc *workerConfig, events chan<- event) (*workerProc, error) {
	cmd := exec.Command(c.opts.WorkerExe, c.opts.WorkerArgs...)
	cmd.Env = append(os.Environ(), c.opts.WorkerEnv...)
	// A worker must not outlive a coordinator that was killed.
	// Its own process group keeps a terminal's ^C from killing workers
	// behind the coordinator's back: the coordinator stops them itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stdin, stdout, stderr, err := startPiped(cmd)
	if err != nil {
		return nil, err
	}
	w := &workerProc{index: p, threads: wc.Threads, cmd: cmd, stdin: stdin, fw: newFrameWriter(stdin), pid: cmd.Process.Pid,
		lastSeen: time.Now()}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		c.forwardStderr(w, stderr)
	}()
	go func() {
		w.readMessages(stdout, events)
		<-stderrDone
		cmd.Wait()
		stdout.Close()
		stdin.Close() // may already be closed by stop: harmless
		w.state = cmd.ProcessState
		events <- event{w: w, exit: true}
	}()
	if err := w.fw.write(&message{Type: msgConfig, Config: wc}); err != nil {
		// The worker died at once; its exit event says how.
		w.failMsg = "could not be sent its configuration: " + err.Error()
	}
	return w, nil
}

// startPiped starts cmd with a pipe on each of its standard streams and
// returns the coordinator's ends. The pipes are made here, not with
// cmd.StdinPipe and friends: a failure half-way would leave the ends exec
// keeps for the child open until a Wait that never comes. Every end is
// closed on every path.
func startPiped(cmd *exec.Cmd) (stdin, stdout, stderr *os.File, err error) {
	var fds []*os.File
	closeAll := func() {
		for _, f := range fds {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			fds = append(fds, r, w)
		}
		return r, w, err
	}
	stdinR, stdin, err := pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	stderr, stderrW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	// The child has its own copies; ours of its ends would keep its
	// stdout open after it exits, and the reader would never see EOF.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	return stdin, stdout, stderr, nil
}

// forwardStderr copies a worker's stderr to the coordinator's, a line at a
// time with the worker's name, until the worker closes it. The Go
// runtime's fatal error (it could not start a thread: pthread_create
// failed) is kept for the worker's description, its first line only: the
// goroutine and register dump after it is nothing a user can act on.
func (c *coordinator) forwardStderr(w *workerProc, stderr *os.File) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); crashLine(line) {
			w.crash.Store(&line)
			break
		}
		c.errMu.Lock()
		fmt.Fprintf(c.opts.Stderr, "%s: %s\n", w.name(), sc.Text())
		c.errMu.Unlock()
	}
	// A line too long to scan ends the forwarding, not the reading: a
	// worker blocked on a full stderr pipe would wedge the run.
	io.Copy(io.Discard, stderr)
	stderr.Close()
}

// readMessages hands the worker's messages to the coordinator as events
// until its stdout ends; a stream that is not the protocol is kept as
// readErr for the worker's description.
func (w *workerProc) readMessages(stdout io.Reader, events chan<- event) {
	fr := newFrameReader(stdout)
	for {
		m, err := fr.read()
		if err != nil {
			if err != io.EOF {
				w.readErr = err
			}
			break
		}
		events <- event{w: w, msg: m}
	}
	io.Copy(io.Discard, stdout) // so the worker never blocks writing
}

// stop ends every worker still running: the barrier is aborted and stdin
// closed, so they unwind and release their registrations; those still
// running after a grace period are killed. Nothing is left running.
func (c *coordinator) stop(sh *shm, workers []*workerProc, events <-chan event) {
	sh.abort()
	running := 0
	for _, w := range workers {
		w.stdin.Close()
		if !w.exited {
			running++
		}
	}
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	for running > 0 {
		select {
		case ev := <-events:
			if ev.exit {
				ev.w.exited = true
				running--
			}
		case <-grace.C:
			for _, w := range workers {
				if !w.exited {
					w.cmd.Process.Kill()
				}
			}
		}
	}
}

// holder is the coordinator's own registrant: it prepares the QPs a
// workload needs before the workers start and releases them after.
type holder struct {
	dev             *verbs.Device
	dom, fdom       *verbs.Domain
	domain, fdomain string
	held, foreign   []uint32
	invalid         []uint32
}

// made is what the holder made, as the leak check probes it.
func (h *holder) made() leaks.Holder {
	return leaks.Holder{Domain: h.domain, ForeignDomain: h.fdomain, Held: h.held, Foreign: h.foreign}
}

func openHolder(vo verbs.Options, domain, foreign string, spec *workloads.Spec, qps, threads int) (*holder, error) {
	dev, err := verbs.Open(vo)
	if err != nil {
		return nil, err
	}
	h := &holder{dev: dev, domain: domain, fdomain: foreign}
	fail := func(err error) (*holder, error) {
		h.release()
		return nil, err
	}
	if h.dom, err = dev.OpenDomain(domain, true); err != nil {
		return fail(err)
	}
	if spec.QPs.Holder {
		n := qps
		if spec.QPs.Scope == workloads.PerThread {
			n = qps * threads
		}
		h.held, err = prepareQPs(h.dom, n)
		if err != nil {
			return fail(err)
		}
	}
	if spec.Uses(workloads.OpRegInvalid) {
		// QP numbers that existed and were destroyed: invalid for sure,
		// since the device does not reuse them until the 24-bit space wraps.
		stale, err := prepareQPs(h.dom, qps)
		for _, q := range stale {
			if _, uerr := h.dom.Unreg(q); uerr != nil && err == nil {
				err = uerr
			}
		}
		if err != nil {
			return fail(err)
		}
		h.invalid = stale
	}
	if spec.Uses(workloads.OpRegForeign) {
		if h.fdom, err = dev.OpenDomain(foreign, true); err != nil {
			return fail(err)
		}
		if h.foreign, err = prepareQPs(h.fdom, qps); err != nil {
			return fail(err)
		}
	}
	return h, nil
}

// prepareQPs creates n receive QPs in dom for the holder; on an error it
// returns those it created, for the caller to release.
func prepareQPs(dom *verbs.Domain, n int) ([]uint32, error) {
	var out []uint32
	for i := 0; i < n; i++ {
		qpn, err := dom.CreateRcvQP()
		if err != nil {
			return out, fmt.Errorf("preparing QPs: %w", err)
		}
		out = append(out, qpn)
		// In the state the threads' own creates leave theirs
		// (--qp-state), so reg and destroy meet what they would
		// in production.
		if err := dom.MoveQP(qpn); err != nil {
			return out, fmt.Errorf("preparing QPs: %w", err)
		}
	}
	return out, nil
}

// release unregisters what the holder holds (destroying those QPs) and
// closes it.
func (h *holder) release() error {
	if h.dev != nil {
		// A device file cut short under the mapping (its workers died
		// of it) is not touched: the coordinator would die too, and
		// write nothing. Giving it up unmaps it.
		if err := h.dev.Intact(); err != nil {
			h.dev.Abandon()
			return err
		}
	}
	var errs []error
	for _, x := range []struct {
		dom  *verbs.Domain
		qpns *[]uint32
	}{{h.dom, &h.held}, {h.fdom, &h.foreign}} {
		if x.dom == nil {
			continue
		}
		for _, q := range *x.qpns {
			if _, err := x.dom.Unreg(q); err != nil {
				errs = append(errs, err)
			}
		}
		if err := x.dom.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if h.dev != nil {
		if err := h.dev.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
