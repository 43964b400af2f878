package bench

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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
func WorkerMain(in io.Reader, out io.Writer) error {
	fr, fw := newFrameReader(in), newFrameWriter(out)
	m, err := fr.read()
	if err != nil {
		return fmt.Errorf("reading the configuration: %w", err)
	}
	if m.Type != msgConfig || m.Config == nil {
		return fmt.Errorf("%w: expected %s, got %q", errProto, msgConfig, m.Type)
	}
	cfg := m.Config
	startRealTime() // the measured threads take cfg.RealTime back, alone
	if testHookConfig != nil {
		testHookConfig(cfg)
	}
	fail := func(err error) error {
		fw.write(&message{Type: msgError, Error: err.Error()})
		return err
	}
	spec, err := workloads.Parse([]byte(cfg.WorkloadSpec), cfg.WorkloadFile)
	if err != nil {
		return fail(err)
	}
	if cfg.Threads <= 0 || cfg.ThreadBase+cfg.Threads > cfg.TotalThreads || cfg.QPs <= 0 {
		return fail(fmt.Errorf("bad worker configuration: threads %d at %d of %d, qps %d", cfg.Threads, cfg.ThreadBase, cfg.TotalThreads, cfg.QPs))
	}
	var plan *workloads.StormPlan
	if spec.Mode == workloads.StormMode {
		// Every worker draws the same plan from the same seed.
		if cfg.StormNodes < 2 || spec.Storm.QPs(cfg.StormNodes, cfg.TotalThreads) != cfg.QPs {
			return fail(fmt.Errorf("bad worker configuration: storm of %d nodes x %d ranks with %d QP slots", cfg.StormNodes, cfg.TotalThreads, cfg.QPs))
		}
		plan = spec.Storm.Plan(cfg.StormNodes, cfg.TotalThreads, cfg.Seed)
	}
	// A P for every measured thread, and two for the goroutines that talk
	// to the coordinator. With fewer (GOMAXPROCS defaults to the CPUs), a
	// thread back from the barrier's futex waits for a P, which the
	// runtime's monitor takes every 20 µs from a thread inside a timed C
	// call and hands over with a wake-up, on a CPU where another thread
	// is timing an operation. With a P each, the threads' barrier waits
	// can keep it (shm.raw).
	if n := cfg.Threads + 2; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	sh, err := openShm(cfg.Shm)
	if err != nil {
		return fail(err)
	}
	sh.raw = true
	defer sh.close()

	// One goroutine owns stdout; threads hand it interval messages.
	outq := make(chan *message, 256)
	var wmu sync.Mutex
	var werr error
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		// A worker that has said nothing for a heartbeat period says it is
		// alive: the coordinator's watchdog takes a worker silent for
		// --stall-timeout for a stalled one (stopped, wedged).
		beat := time.NewTicker(heartbeat(cfg.Interval))
		defer beat.Stop()
		last := time.Now()
		send := func(m *message) {
			last = time.Now()
			if err := fw.write(m); err != nil {
				wmu.Lock()
				if werr == nil {
					werr = err
				}
				wmu.Unlock()
				sh.abort() // the coordinator is gone: stop everyone
			}
		}
		for {
			select {
			case m, ok := <-outq:
				if !ok {
					return
				}
				send(m)
			case now := <-beat.C:
				if now.Sub(last) >= heartbeat(cfg.Interval)/2 {
					send(&message{Type: msgAlive})
				}
			}
		}
	}()

	type readyT struct {
		local, cpu int
		err        error
	}
	ready := make(chan readyT, cfg.Threads)
	start := make(chan uint64) // closed with the deadline set
	var deadline uint64
	var wg sync.WaitGroup
	trs := make([]threadResult, cfg.Threads)
	ths := make([]*thread, cfg.Threads)
	errs := make([]error, cfg.Threads)
	for i := 0; i < cfg.Threads; i++ {
		t := newThread(cfg, spec, i, sh)
		if plan != nil {
			t.storm.steps = plan.Ranks[t.g]
		}
		ths[i] = t
		t.report = func(m *intervalMsg) { outq <- &message{Type: msgInterval, Interval: m} }
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lockThread() // never unlocked: the OS thread ends with the goroutine
			err := t.setup()
			ready <- readyT{i, t.cpu, err}
			<-start
			if err == nil && deadline != 0 {
				err = t.run(deadline)
				if err != nil {
					sh.abort()
				}
			}
			if terr := t.teardown(); err == nil && terr != nil {
				err = fmt.Errorf("thread %d teardown: %w", t.g, terr)
			}
			errs[i] = err
			if err == nil {
				trs[i], errs[i] = t.result()
			}
		}(i)
	}
	finish := func() {
		wg.Wait()
		close(outq)
		<-writerDone
	}

	cpus := make([]int, cfg.Threads)
	var setupErr error
	for i := 0; i < cfg.Threads; i++ {
		r := <-ready
		cpus[r.local] = r.cpu
		if r.err != nil && setupErr == nil {
			setupErr = fmt.Errorf("thread %d: %w", cfg.ThreadBase+r.local, r.err)
		}
	}
	if setupErr != nil {
		sh.abort()
		close(start)
		finish()
		return fail(setupErr)
	}
	outq <- &message{Type: msgReady, Ready: &readyMsg{CPUs: cpus}}

	m, err = fr.read()
	if err != nil || m.Type != msgStart || m.Start == nil {
		sh.abort()
		close(start)
		finish()
		if err == nil {
			err = fmt.Errorf("%w: expected %s, got %q", errProto, msgStart, m.Type)
		}
		return fmt.Errorf("waiting for the start: %w", err)
	}
	deadline = m.Start.Deadline
	close(start)
	// The coordinator closes our stdin to stop us early.
	var finished atomic.Bool
	go func() {
		fr.read()
		if !finished.Load() {
			sh.abort()
		}
	}()
	wg.Wait()
	finished.Store(true)
	var first error
	for _, e := range errs {
		if e != nil && (first == nil || errors.Is(first, ErrAborted) && !errors.Is(e, ErrAborted)) {
			first = e
		}
	}
	if first != nil {
		outq <- &message{Type: msgError, Error: first.Error()}
	} else {
		var created *qpSet
		for _, t := range ths {
			created = created.union(t.created)
		}
		done := &doneMsg{Threads: trs, Created: created}
		// Memory as the worker finishes, its threads' state still mapped;
		// a kernel without smaps_rollup (before 4.14) leaves it out.
		done.RSSKB, done.PSSKB, _ = selfMemory()
		outq <- &message{Type: msgDone, Done: done}
	}
	close(outq)
	<-writerDone
	if first != nil {
		return first
	}
	wmu.Lock()
	defer wmu.Unlock()
	return werr
}
