package bench

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/verbs"
)

// The coordinator and its workers talk over the worker's stdin and stdout:
// frames of a 4-byte big-endian length and a JSON message that carries the
// protocol version, so a worker binary from another build is refused with
// a clear error instead of misreading the stream.
const (
	protoVersion  = 2
	maxFrameBytes = 64 << 20
)

// Message types.
const (
	msgConfig   = "config"   // coordinator → worker: what to run
	msgStart    = "start"    // coordinator → worker: the start deadline
	msgReady    = "ready"    // worker → coordinator: every thread is set up
	msgInterval = "interval" // worker → coordinator: one thread's interval histograms
	msgDone     = "done"     // worker → coordinator: final counts and histograms
	msgError    = "error"    // worker → coordinator: why the worker fails
	msgAlive    = "alive"    // worker → coordinator: nothing else to say for an interval
)

type message struct {
	V        int           `json:"v"`
	Type     string        `json:"type"`
	Config   *workerConfig `json:"config,omitempty"`
	Start    *startMsg     `json:"start,omitempty"`
	Ready    *readyMsg     `json:"ready,omitempty"`
	Interval *intervalMsg  `json:"interval,omitempty"`
	Done     *doneMsg      `json:"done,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// workerConfig is everything a worker process needs; it is self-contained
// so the worker reads no flags and no files but the ones it names.
type workerConfig struct {
	Index        int           `json:"index"`         // worker process index
	ThreadBase   int           `json:"thread_base"`   // global index of this worker's thread 0
	Threads      int           `json:"threads"`       // threads in this worker
	TotalThreads int           `json:"total_threads"` // threads in all workers
	Verbs        verbs.Options `json:"verbs"`
	Domain       string        `json:"domain"` // domain file
	Shm          string        `json:"shm"`    // barrier segment file
	WorkloadSpec string        `json:"workload_spec"`
	WorkloadFile string        `json:"workload_file,omitempty"`
	QPs          int           `json:"qps"`
	Duration     time.Duration `json:"duration"`
	Iterations   int64         `json:"iterations"`
	Warmup       time.Duration `json:"warmup"`
	Interval     time.Duration `json:"interval"`
	CPUs         []int         `json:"cpus,omitempty"` // per thread of this worker, the CPU it is bound to; nil: unbound
	Seed         int64         `json:"seed"`
	StormNodes   int           `json:"storm_nodes,omitempty"` // mode storm: the job's nodes
	// Op programs: steps per C call at most, and about how long one runs.
	BatchOps  int           `json:"batch_ops,omitempty"`
	BatchTime time.Duration `json:"batch_time,omitempty"`
	// Open loop: intended starts at Rate operations per second per
	// thread, Arrival "fixed" or "poisson"; 0: a closed loop.
	Rate    float64 `json:"rate,omitempty"`
	Arrival string  `json:"arrival,omitempty"`
	Wait    string  `json:"wait,omitempty"` // WaitSpin or WaitSleep (openWait)
	// QP numbers prepared by the coordinator's holder registrant.
	Held    []uint32 `json:"held,omitempty"`    // shared: qps; per_thread: qps per global thread
	Invalid []uint32 `json:"invalid,omitempty"` // destroyed QPs, for reg_invalid
	Foreign []uint32 `json:"foreign,omitempty"` // QPs of another domain, for reg_foreign

	// The real-time policy the run was started with, for the measured
	// threads only (internal/host/realtime.go); nil: none.
	RealTime *host.RTSched `json:"real_time,omitempty"`
}

type startMsg struct {
	Deadline uint64 `json:"deadline"` // CLOCK_MONOTONIC ns
}

type readyMsg struct {
	CPUs []int `json:"cpus"` // per thread, -1 when not pinned
	// The worker's build (BuildID) and Version: the coordinator refuses
	// a worker that is not its own build.
	Build   string `json:"build"`
	Version string `json:"version"`
}

// intervalMsg carries one thread's histograms for one interval of the
// measurement (index counted from the measurement start).
type intervalMsg struct {
	Thread int               `json:"thread"`
	Index  int64             `json:"index"`
	Hists  map[string]string `json:"hists"` // op kind → encoded histogram
	// End (CLOCK_MONOTONIC ns) is where the thread's interval ended: when
	// its batch in flight at the planned end returned, or the end of the
	// measurement (the last interval of a repetition is usually short).
	End uint64 `json:"end,omitempty"`
	// Start (CLOCK_MONOTONIC ns), in the first interval a thread reports,
	// is where its measurement began: a thread released at the start line
	// begins a little after it (a busy machine: tens of ms), and the
	// repetition's length, which ops/s divide by, runs from the earliest
	// such start, so the timelines' first interval must too.
	Start uint64 `json:"start,omitempty"`
	// For the live progress only (the result counts from done messages):
	// the interval's operations with an unexpected outcome, per op kind,
	// and the passes or rounds the thread has completed so far.
	Errors map[string]int64 `json:"errors,omitempty"`
	Rounds int64            `json:"rounds,omitempty"`
}

type doneMsg struct {
	Threads []threadResult `json:"threads"`
	// Created is every QP number the worker's threads created, for the
	// leak probe (rdma, legacy); one set per worker keeps the message small.
	Created *leaks.Set `json:"created,omitempty"`
	// The process's resident memory, KiB (smaps_rollup), as its threads
	// stopped measuring, and the largest sampled while they measured
	// (memSampler).
	RSSKB     int64 `json:"rss_kb,omitempty"`
	PSSKB     int64 `json:"pss_kb,omitempty"`
	PeakRSSKB int64 `json:"peak_rss_kb,omitempty"`
	PeakPSSKB int64 `json:"peak_pss_kb,omitempty"`
}

// threadResult is one thread's measurement.
type threadResult struct {
	Thread  int                         `json:"thread"` // global index
	CPU     int                         `json:"cpu"`
	Started uint64                      `json:"started"` // measurement start, CLOCK_MONOTONIC ns
	Ended   uint64                      `json:"ended"`
	Rounds  int64                       `json:"rounds"`
	Kinds   map[string]kindResult       `json:"kinds"`
	Errnos  map[string]map[string]int64 `json:"errnos,omitempty"`
	// Coverage: time waited at barriers, and the longest untimed stretch
	// (ns, start since Started, kind of the batch after it).
	WaitNS  int64  `json:"wait_ns,omitempty"`
	GapNS   int64  `json:"gap_ns,omitempty"`
	GapAtNS int64  `json:"gap_at_ns,omitempty"`
	GapKind string `json:"gap_kind,omitempty"`
	// The timer overhead measured on the thread before and after its run.
	TimerBeforeNS float64 `json:"timer_before_ns,omitempty"`
	TimerAfterNS  float64 `json:"timer_after_ns,omitempty"`
	// A storm's rank: its completion and teardown times since their
	// starts, -1 when not reached.
	StormDoneNS     *int64 `json:"storm_done_ns,omitempty"`
	StormTeardownNS *int64 `json:"storm_teardown_ns,omitempty"`
	StormRunQueueNS *int64 `json:"storm_runq_ns,omitempty"`
	StormBusyNS     *int64 `json:"storm_busy_ns,omitempty"` // its timed operations until done
	StormWon        []int  `json:"storm_won,omitempty"`     // connections whose election it won
	// Open is what became of the thread's open-loop schedule; nil in a
	// closed loop.
	Open *openResult `json:"open,omitempty"`
	// While it measured: its time on the run queue (runnable, not
	// running; nil where schedstat is unreadable), and blocked on the
	// device's locks and waiting for its command queue (the sim's).
	RunQueueNS     *int64 `json:"runq_ns,omitempty"`
	DeviceLockNS   int64  `json:"device_lock_ns,omitempty"`
	CommandQueueNS int64  `json:"command_queue_ns,omitempty"`
	// StartRunQueueNS is how much of its lateness past the planned start
	// (Started) the thread spent runnable but not running: the machine's
	// part of its start offset.
	StartRunQueueNS int64 `json:"start_runq_ns,omitempty"`
}

// openResult is one thread's open loop: operations scheduled, waits for
// an intended start and their wake-up lateness, and how far behind the
// schedule its last operation (and its most behind one) began.
type openResult struct {
	Scheduled   int64 `json:"scheduled"`
	Waits       int64 `json:"waits"`
	LateNS      int64 `json:"late_ns"`
	LateMaxNS   int64 `json:"late_max_ns"`
	BehindNS    int64 `json:"behind_ns"`
	BehindMaxNS int64 `json:"behind_max_ns"`
	// OverNS is how long the thread was more than LimitNS behind its
	// schedule, within SampledNS: the window from its measurement's first
	// intended start to its last backlog sample, which OverNS is counted
	// in (so their ratio is a share, at most 1).
	OverNS    int64 `json:"over_ns"`
	SampledNS int64 `json:"sampled_ns"`
	LimitNS   int64 `json:"limit_ns"`
}

// kindResult is one thread's counts of one op kind. Its latencies are the
// sum of the thread's interval messages.
type kindResult struct {
	Count    int64 `json:"count"`
	Batches  int64 `json:"batches"`
	Errors   int64 `json:"errors"`
	TimedNS  int64 `json:"timed_ns,omitempty"`   // the sum of its latencies
	MaxGapNS int64 `json:"max_gap_ns,omitempty"` // the longest untimed stretch before one of its batches
}

// frameWriter writes messages; not safe for concurrent use.
type frameWriter struct {
	w   *bufio.Writer
	hdr [4]byte
}

func newFrameWriter(w io.Writer) *frameWriter { return &frameWriter{w: bufio.NewWriter(w)} }

func (f *frameWriter) write(m *message) error {
	m.V = protoVersion
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(f.hdr[:], uint32(len(data)))
	if _, err := f.w.Write(f.hdr[:]); err != nil {
		return err
	}
	if _, err := f.w.Write(data); err != nil {
		return err
	}
	return f.w.Flush()
}

// errProto marks a stream that is not this protocol.
var errProto = errors.New("protocol error")

type frameReader struct {
	r *bufio.Reader
}

func newFrameReader(r io.Reader) *frameReader { return &frameReader{r: bufio.NewReader(r)} }

// read returns io.EOF at a clean end of stream, and io.ErrUnexpectedEOF
// when the stream ends inside a frame.
func (f *frameReader) read() (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxFrameBytes {
		return nil, fmt.Errorf("%w: frame of %d bytes", errProto, n)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(f.r, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", errProto, err)
	}
	if m.V != protoVersion {
		return nil, fmt.Errorf("%w: version %d, this xrcbench speaks %d (worker and coordinator binaries differ)", errProto, m.V, protoVersion)
	}
	return &m, nil
}
