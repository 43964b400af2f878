package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

type coordinator struct {
	cfg   Config
	opts  Options
	priv  string
	logs  *hlogs
	errMu sync.Mutex // serialises writes to opts.Stderr
	live  *live      // the current repetition's progress
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
	created  *qpSet                             // QP numbers the threads created, when probed
	leaks    *results.LeakCheck
	// A storm with teardown exit: from the last rank's exit until the
	// device showed none of the job's QPs (-1: not measured, and why).
	stormExitNS   int64
	stormExitNote string
	warnings      []string
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
// processes and a fresh device directory, so repetitions are independent.
func (c *coordinator) repetition(ctx context.Context, idx int) (*repOutcome, error) {
	cfg := c.cfg
	out := &repOutcome{index: idx, stormExitNS: -1}
	c.live = newLive(&c.cfg, idx)
	var tick <-chan time.Time
	if c.opts.Progress != nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	dir := filepath.Join(c.priv, fmt.Sprintf("rep%d", idx+1))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return out, err
	}
	vo := verbs.Options{Provider: cfg.Provider, Device: cfg.Device, QPState: cfg.QPState,
		Sim: verbs.SimOptions{Dir: filepath.Join(dir, "sim"), Semantics: cfg.semantics(), Cost: cfg.SimCost, MaxQPs: cfg.SimMaxQPs}}
	total := cfg.Procs * cfg.Threads
	h, err := openHolder(vo, filepath.Join(dir, "domain"), filepath.Join(dir, "foreign"), cfg.Workload, cfg.QPs, total)
	if err != nil {
		return out, err
	}
	out.info = h.dev.Info()
	defer func() {
		if err := h.release(); err != nil {
			out.warnings = append(out.warnings, fmt.Sprintf("repetition %d: releasing the holder: %v", idx+1, err))
		}
		out.leaks = checkLeaks(vo, h, out.created, len(out.threads) == total)
	}()

	slots := cfg.QPs
	sh, err := createShm(filepath.Join(dir, "barrier"), total, slots)
	if err != nil {
		return out, err
	}
	defer sh.close()

	events := make(chan event, 16*cfg.Procs)
	var workers []*workerProc
	for p := 0; p < cfg.Procs; p++ {
		wc := &workerConfig{
			Index: p, ThreadBase: p * cfg.Threads, Threads: cfg.Threads, TotalThreads: total,
			Verbs: vo, Domain: h.domain, Shm: filepath.Join(dir, "barrier"),
			WorkloadSpec: cfg.Workload.Source, WorkloadFile: cfg.Workload.File,
			QPs: cfg.QPs, Duration: cfg.Duration, Iterations: cfg.Iterations, Warmup: cfg.Warmup,
			Interval: cfg.Interval, Pin: cfg.Pin, Seed: cfg.Seed, RealTime: startRealTime(),
			BatchOps: cfg.BatchOps, BatchTime: cfg.BatchTime, Rate: cfg.threadRate(), Arrival: cfg.arrival(),
			Held: h.held, Invalid: h.invalid, Foreign: h.foreign,
		}
		if cfg.Workload.Mode == workloads.StormMode {
			wc.StormNodes = cfg.StormNodes()
		}
		w, err := c.spawn(p, wc, events)
		if err != nil {
			c.stop(sh, workers, events)
			return out, fmt.Errorf("starting worker %d: %w", p, err)
		}
		workers = append(workers, w)
	}
	out.workers = workers
	c.report(c.live, nil, true)

	fail := func(err error) (*repOutcome, error) {
		c.stop(sh, workers, events)
		return out, err
	}
	// Every worker reports ready once all its threads hold their
	// registrant; a worker failing or dying here fails the repetition.
	readyBy := time.NewTimer(60*time.Second + time.Duration(cfg.Procs)*time.Second)
	defer readyBy.Stop()
	stallTimeout := cfg.stallTimeout()
	stallCheck := time.NewTicker(min(stallTimeout/4, time.Second))
	defer stallCheck.Stop()
	for nready := 0; nready < len(workers); {
		select {
		case ev := <-events:
			if err := c.handle(ev, out, sh, false); err != nil {
				return fail(err)
			}
			if ev.msg != nil && ev.msg.Type == msgReady {
				nready++
			}
		case <-tick:
			c.report(c.live, nil, false)
		case <-stallCheck.C:
			if w := stalledWorker(workers, stallTimeout); w != nil {
				return fail(stallError(w, stallTimeout, "before the start"))
			}
		case <-readyBy.C:
			return fail(errors.New("workers did not get ready within a minute"))
		case <-ctx.Done():
			return fail(fmt.Errorf("interrupted (%v) before the start", context.Cause(ctx)))
		}
	}

	margin := 50*time.Millisecond + time.Duration(cfg.Procs)*5*time.Millisecond + time.Duration(total)*100*time.Microsecond
	deadline := verbs.Now() + uint64(margin)
	sh.setDeadline(deadline)
	c.logs.startRep(total)
	c.live.start = deadline
	c.report(c.live, sh, true)
	for _, w := range workers {
		if err := w.fw.write(&message{Type: msgStart, Start: &startMsg{Deadline: deadline}}); err != nil {
			return fail(fmt.Errorf("%s: sending the start: %w", w.name(), err))
		}
	}
	var watchdog <-chan time.Time
	if cfg.Duration > 0 {
		// A duration run that overstays this much is wedged.
		t := time.NewTimer(margin + cfg.Warmup + cfg.Duration + 60*time.Second)
		defer t.Stop()
		watchdog = t.C
	}
	interrupt := ctx.Done()
	// stopErr says why the run was stopped early (^C, a stalled worker):
	// the workers still running are drained, what was measured is kept.
	var stopErr error
	var draining bool
	var stopAt uint64
	var grace <-chan time.Time
	drain := func(abortNow bool, wait time.Duration) {
		draining, stopAt = true, verbs.Now()
		sh.requestStop()
		if abortNow {
			sh.abort()
		}
		grace = time.After(wait)
	}
	var lastExit uint64 // when the last worker's exit was seen
	for pending := len(workers); pending > 0; {
		select {
		case ev := <-events:
			if err := c.handle(ev, out, sh, draining); err != nil {
				return fail(err)
			}
			if ev.exit {
				pending--
				lastExit = verbs.Now()
			}
		case <-tick:
			c.report(c.live, sh, false)
		case <-stallCheck.C:
			w := stalledWorker(workers, stallTimeout)
			if w == nil || draining {
				continue
			}
			stopErr = stallError(w, stallTimeout, "the other workers' measurements are kept")
			w.cmd.Process.Kill()
			// Threads of a rounds workload would wait for the stalled
			// worker's at their next barrier: they stop at once; loop
			// threads end their pass and send their counts.
			drain(cfg.Workload.Mode == workloads.Rounds, 5*time.Second)
		case <-watchdog:
			return fail(errors.New("the run did not finish within a minute of its planned end"))
		case <-interrupt:
			// Stop now: threads end their pass or round and report what
			// they measured, which the result keeps as partial.
			interrupt = nil
			stopErr = fmt.Errorf("interrupted (%v): measured until then", context.Cause(ctx))
			drain(false, time.Second)
		case <-grace:
			// What has not ended by now is stuck in a long operation or at
			// a barrier: abort, and kill the workers still running. What
			// they sent is kept.
			grace = nil
			sh.abort()
			for _, w := range workers {
				if !w.exited {
					w.cmd.Process.Kill()
				}
			}
		}
	}
	c.logs.endRep()
	out.hists = c.logs.totals
	if c.logs.late > 0 {
		out.warnings = append(out.warnings, fmt.Sprintf("repetition %d: %d interval report(s) came after their interval was written to the .hlog timelines (a thread lagged by more than two intervals, e.g. stopped or starved): they are written late, as extra lines with their interval's start time",
			idx+1, c.logs.late))
	}
	if draining {
		c.keepReported(out, workers, sh.deadline(), stopAt)
	}
	var minStart, maxStart, maxEnd uint64
	for i, tr := range out.threads {
		if i == 0 || tr.Started < minStart {
			minStart = tr.Started
		}
		maxStart = max(maxStart, tr.Started)
		maxEnd = max(maxEnd, tr.Ended)
	}
	if len(out.threads) != total {
		return out, fmt.Errorf("got results of %d threads, want %d", len(out.threads), total)
	}
	out.wall = time.Duration(maxEnd - minStart)
	out.skew = int64(maxStart - minStart)
	out.minStart = minStart
	out.measured = true
	out.stormExitNS, out.stormExitNote = -1, ""
	if cfg.Workload.Mode == workloads.StormMode && cfg.Workload.Storm.Teardown == workloads.TeardownExit {
		if draining {
			out.stormExitNote = "the run was stopped"
		} else {
			out.stormExitNS, out.stormExitNote = stormExitTeardown(vo, lastExit)
		}
	}
	c.reportDone(c.live, out)
	return out, stopErr
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
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return "state unknown"
	}
	names := map[byte]string{'R': "running", 'S': "sleeping", 'D': "in uninterruptible sleep", 'T': "stopped",
		't': "stopped by a tracer", 'Z': "a zombie", 'X': "dead", 'I': "idle"}
	st := s[i+2]
	if n, ok := names[st]; ok {
		return fmt.Sprintf("state %c, %s", st, n)
	}
	return fmt.Sprintf("state %c", st)
}

// handle processes one event; an error fails the repetition.
// While the run is drained (stopped early), a worker that ends without
// its results, or says it failed, is expected: what it sent is kept.
func (c *coordinator) handle(ev event, out *repOutcome, sh *shm, draining bool) error {
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
		w.ready, w.cpus = true, m.Ready.CPUs
	case msgInterval:
		if m.Interval == nil {
			return fmt.Errorf("%s: %w: empty interval message", w.name(), errProto)
		}
		if err := c.logs.add(m.Interval, sh.deadline()); err != nil {
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
		out.created = out.created.union(m.Done.Created)
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
	// The pipes are made here, not with cmd.StdinPipe and friends: a
	// failure half-way would leave the ends exec keeps for the child open
	// until a Wait that never comes. Every end is closed on every path.
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
		return nil, err
	}
	stdout, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	stderr, stderrW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	// The child has its own copies; ours of its ends would keep its
	// stdout open after it exits, and the reader would never see EOF.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	w := &workerProc{index: p, threads: wc.Threads, cmd: cmd, stdin: stdin, fw: newFrameWriter(stdin), pid: cmd.Process.Pid,
		lastSeen: time.Now()}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			c.errMu.Lock()
			fmt.Fprintf(c.opts.Stderr, "%s: %s\n", w.name(), sc.Text())
			c.errMu.Unlock()
		}
		// A line too long to scan ends the forwarding, not the reading: a
		// worker blocked on a full stderr pipe would wedge the run.
		io.Copy(io.Discard, stderr)
		stderr.Close()
	}()
	go func() {
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
	create := func(dom *verbs.Domain, n int) ([]uint32, error) {
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
	if spec.QPs.Holder {
		n := qps
		if spec.QPs.Scope == workloads.PerThread {
			n = qps * threads
		}
		h.held, err = create(h.dom, n)
		if err != nil {
			return fail(err)
		}
	}
	if spec.Uses(workloads.OpRegInvalid) {
		// QP numbers that existed and were destroyed: invalid for sure,
		// since the device does not reuse them until the 24-bit space wraps.
		stale, err := create(h.dom, qps)
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
		if h.foreign, err = create(h.fdom, qps); err != nil {
			return fail(err)
		}
	}
	return h, nil
}

// release unregisters what the holder holds (destroying those QPs) and
// closes it.
func (h *holder) release() error {
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
