package bench

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/workloads"
)

// testHookConfig, set only by this package's tests, alters a worker's
// configuration to provoke failures the coordinator would never cause.
var testHookConfig func(*workerConfig)

// testHookMeasuring, set only by this package's tests, is called by each
// thread as its measurement starts.
var testHookMeasuring func(thread int)

// heartbeat is how often a worker with nothing else to send says it is
// alive: every interval, at most every second.
func heartbeat(interval time.Duration) time.Duration {
	return max(10*time.Millisecond, min(interval, time.Second))
}

// WorkerMain is the body of a worker process: the coordinator re-executes
// its own binary with the hidden worker subcommand, which calls this with
// the process's stdin and stdout. It returns when the work is done, or
// with an error (already reported to the coordinator when possible).
//
// The conversation: configuration in, ready (the threads' CPUs) out, the
// start's deadline in, intervals and a heartbeat out while the threads
// measure, then done (or error) out. The coordinator closes stdin to stop
// the worker early.
func WorkerMain(in io.Reader, out io.Writer) error {
	fr, fw := newFrameReader(in), newFrameWriter(out)
	cfg, err := readWorkerConfig(fr)
	if err != nil {
		return err
	}
	host.StartRealTime() // the measured threads take cfg.RealTime back, alone
	if testHookConfig != nil {
		testHookConfig(cfg)
	}
	// Until the outbox runs, this goroutine is stdout's only writer.
	fail := func(err error) error {
		fw.write(&message{Type: msgError, Error: err.Error()})
		return err
	}
	spec, plan, err := checkWorkerConfig(cfg)
	if err != nil {
		return fail(err)
	}
	reservePs(cfg.Threads)
	sh, err := openShm(cfg.Shm)
	if err != nil {
		return fail(err)
	}
	sh.raw = true
	defer sh.close()

	box := startOutbox(fw, sh, heartbeat(cfg.Interval))
	c := startCrew(cfg, spec, plan, sh, box)
	cpus, err := c.awaitSetup()
	if err != nil {
		c.cancel()
		box.close()
		return fail(err)
	}
	box.send(&message{Type: msgReady, Ready: &readyMsg{CPUs: cpus, Build: BuildID(), Version: host.Version()}})
	deadline, err := readStart(fr)
	if err != nil {
		c.cancel()
		box.close()
		return fmt.Errorf("waiting for the start: %w", err)
	}
	c.start(deadline, host.MemSampleEvery(cfg.Interval))
	stopOnHangUp(fr, sh, c.wait)

	first := firstThreadError(c.errs)
	if first != nil {
		box.send(&message{Type: msgError, Error: first.Error()})
	} else {
		box.send(&message{Type: msgDone, Done: c.done()})
	}
	werr := box.close()
	if first != nil {
		return first
	}
	return werr
}

// readWorkerConfig reads the first message, which must be the configuration.
func readWorkerConfig(fr *frameReader) (*workerConfig, error) {
	m, err := fr.read()
	if err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	if m.Type != msgConfig || m.Config == nil {
		return nil, fmt.Errorf("%w: expected %s, got %q", errProto, msgConfig, m.Type)
	}
	return m.Config, nil
}

// checkWorkerConfig parses the workload and refuses a configuration the
// coordinator would never send; for a storm it draws the plan, the same in
// every worker since all draw from the same seed.
func checkWorkerConfig(cfg *workerConfig) (*workloads.Spec, *workloads.StormPlan, error) {
	spec, err := workloads.Parse([]byte(cfg.WorkloadSpec), cfg.WorkloadFile)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Threads <= 0 || cfg.ThreadBase+cfg.Threads > cfg.TotalThreads || cfg.QPs <= 0 {
		return nil, nil, fmt.Errorf("bad worker configuration: threads %d at %d of %d, qps %d", cfg.Threads, cfg.ThreadBase, cfg.TotalThreads, cfg.QPs)
	}
	if spec.Mode != workloads.StormMode {
		return spec, nil, nil
	}
	if cfg.StormNodes < 2 || spec.Storm.QPs(cfg.StormNodes, cfg.TotalThreads) != cfg.QPs {
		return nil, nil, fmt.Errorf("bad worker configuration: storm of %d nodes x %d ranks with %d QP slots", cfg.StormNodes, cfg.TotalThreads, cfg.QPs)
	}
	return spec, spec.Storm.Plan(cfg.StormNodes, cfg.TotalThreads, cfg.Seed), nil
}

// reservePs gives a P to every measured thread, and two to the goroutines
// that talk to the coordinator. With fewer (GOMAXPROCS defaults to the
// CPUs), a thread back from the barrier's futex waits for a P, which the
// runtime's monitor takes every 20 µs from a thread inside a timed C call
// and hands over with a wake-up, on a CPU where another thread is timing an
// operation. With a P each, the threads' barrier waits can keep it
// (shm.raw).
func reservePs(threads int) {
	if n := threads + 2; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
}

// readStart waits for the coordinator's start and returns its deadline.
func readStart(fr *frameReader) (uint64, error) {
	m, err := fr.read()
	if err != nil {
		return 0, err
	}
	if m.Type != msgStart || m.Start == nil {
		return 0, fmt.Errorf("%w: expected %s, got %q", errProto, msgStart, m.Type)
	}
	return m.Start.Deadline, nil
}

// stopOnHangUp runs measure while watching stdin: the coordinator closes it
// to stop the worker early, which aborts the threads still measuring. A
// hang-up after measure has returned is the ordinary end of the
// conversation and aborts nothing.
func stopOnHangUp(fr *frameReader, sh *shm, measure func()) {
	var finished atomic.Bool
	go func() {
		fr.read()
		if !finished.Load() {
			sh.abort()
		}
	}()
	measure()
	finished.Store(true)
}

// firstThreadError is the error the worker reports for its threads: the
// first one, but a thread's own failure before the aborts it caused in the
// others, since the abort says nothing about why.
func firstThreadError(errs []error) error {
	var first error
	for _, e := range errs {
		if e != nil && (first == nil || errors.Is(first, ErrAborted) && !errors.Is(e, ErrAborted)) {
			first = e
		}
	}
	return first
}

// outbox is the one goroutine that owns the worker's stdout; threads hand
// it interval messages. A worker that has said nothing for a heartbeat
// period says it is alive: the coordinator's watchdog takes a worker silent
// for --stall-timeout for a stalled one (stopped, wedged).
type outbox struct {
	q    chan *message
	done chan struct{}
	mu   sync.Mutex
	err  error // the first write that failed
}

func startOutbox(fw *frameWriter, sh *shm, beat time.Duration) *outbox {
	o := &outbox{q: make(chan *message, 256), done: make(chan struct{})}
	go o.serve(fw, sh, beat)
	return o
}

func (o *outbox) serve(fw *frameWriter, sh *shm, beat time.Duration) {
	defer close(o.done)
	tick := time.NewTicker(beat)
	defer tick.Stop()
	last := time.Now()
	write := func(m *message) {
		last = time.Now()
		if err := fw.write(m); err != nil {
			o.mu.Lock()
			if o.err == nil {
				o.err = err
			}
			o.mu.Unlock()
			sh.abort() // the coordinator is gone: stop everyone
		}
	}
	for {
		select {
		case m, ok := <-o.q:
			if !ok {
				return
			}
			write(m)
		case now := <-tick.C:
			if now.Sub(last) >= beat/2 {
				write(&message{Type: msgAlive})
			}
		}
	}
}

func (o *outbox) send(m *message) { o.q <- m }

// close writes what is queued, stops the outbox and returns the first
// write error.
func (o *outbox) close() error {
	close(o.q)
	<-o.done
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// crew is a worker's measured threads, each on its own locked OS thread:
// all set up, then all wait for the start, measure, tear down and leave
// their result or error in their slot.
type crew struct {
	sh       *shm
	threads  []*thread
	results  []threadResult
	errs     []error
	ready    chan threadSetup
	started  chan struct{} // closed with deadline set
	deadline uint64        // 0: the run was called off before the start
	wg       sync.WaitGroup
	base     int // global index of thread 0
	mem      *host.MemSampler
}

// threadSetup is how a thread's setup went, and on which CPU it landed.
type threadSetup struct {
	local, cpu int
	err        error
}

func startCrew(cfg *workerConfig, spec *workloads.Spec, plan *workloads.StormPlan, sh *shm, box *outbox) *crew {
	c := &crew{
		sh:      sh,
		threads: make([]*thread, cfg.Threads),
		results: make([]threadResult, cfg.Threads),
		errs:    make([]error, cfg.Threads),
		ready:   make(chan threadSetup, cfg.Threads),
		started: make(chan struct{}),
		base:    cfg.ThreadBase,
	}
	for i := range c.threads {
		t := newThread(cfg, spec, i, sh)
		if plan != nil {
			t.storm.steps = plan.Ranks[t.g]
		}
		t.report = func(m *intervalMsg) { box.send(&message{Type: msgInterval, Interval: m}) }
		t.flush = startFlusher(t) // its spare arrays allocated now, before the start
		c.threads[i] = t
		c.wg.Add(1)
		go c.live(i)
	}
	return c
}

// live is thread i's life.
func (c *crew) live(i int) {
	defer c.wg.Done()
	t := c.threads[i]
	lockThread() // never unlocked: the OS thread ends with the goroutine
	err := t.setup()
	c.ready <- threadSetup{i, t.cpu, err}
	<-c.started
	if err == nil && c.deadline != 0 {
		err = t.run(c.deadline)
		// The first thread to stop measuring ends the memory's sampling,
		// before any thread tears down: a teardown unmaps the device.
		c.mem.End()
		if err != nil {
			c.sh.abort()
		}
	}
	// A thread that failed before the end of its measurement may still
	// have intervals with the flusher: they go out before the error does.
	if ferr := t.closeFlush(); err == nil {
		err = ferr
	}
	if terr := t.teardown(); err == nil && terr != nil {
		err = fmt.Errorf("thread %d teardown: %w", t.g, terr)
	}
	c.errs[i] = err
	if err == nil {
		c.results[i], c.errs[i] = t.result()
	}
}

// awaitSetup waits for every thread's setup and returns their CPUs, or
// the first setup error to arrive.
func (c *crew) awaitSetup() ([]int, error) {
	cpus := make([]int, len(c.threads))
	var first error
	for range c.threads {
		r := <-c.ready
		cpus[r.local] = r.cpu
		if r.err != nil && first == nil {
			first = fmt.Errorf("thread %d: %w", c.base+r.local, r.err)
		}
	}
	return cpus, first
}

// start lets the threads measure from deadline.
func (c *crew) start(deadline uint64, memEvery time.Duration) {
	c.mem = host.StartMemSampler(memEvery)
	c.deadline = deadline
	close(c.started)
}

// cancel calls the run off before the start: the threads tear down
// without measuring.
func (c *crew) cancel() {
	c.sh.abort()
	close(c.started)
	c.wait()
}

func (c *crew) wait() { c.wg.Wait() }

// done is the worker's final message when every thread succeeded.
func (c *crew) done() *doneMsg {
	var created *leaks.Set
	for _, t := range c.threads {
		created = created.Union(t.created)
	}
	d := &doneMsg{Threads: c.results, Created: created}
	// Memory while the threads measured; a kernel without smaps_rollup
	// (before 4.14) leaves it out.
	d.RSSKB, d.PSSKB, d.PeakRSSKB, d.PeakPSSKB = c.mem.Result()
	return d
}
