package verbs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/stats"
)

// Measurement is one figure of Calibrate, with the target it is held to
// (none for figures that are only informative: they are always OK).
// Targets that depend on the machine are ratios to a figure measured in the
// same run (the hot path against one timer read), so they mean the same on
// a noisy shared machine as on a quiet one; the sim pair's 250 ns and the
// cost model's +5% are fixed bounds, which a slow or loaded machine can miss.
//
// A figure measured while the machine kept taking the CPU away from the
// measuring thread is not judged: Busy says so (OK is then false too, and
// the figure is no miss), and Detail how busy it was.
type Measurement struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target"` // e.g. "<= 1.5"
	OK     bool    `json:"ok"`
	Busy   bool    `json:"busy,omitempty"`
	Detail string  `json:"detail,omitempty"`
}

// Missed says whether m was judged and missed its target.
func (m Measurement) Missed() bool { return m.Target != "" && !m.OK && !m.Busy }

// ThreadSwitches counts the calling OS thread's context switches so far,
// voluntary and not: a measurement slice across which it changed shared
// its CPU with something else (another process, under load), and its
// figures are the machine's as much as the code's.
func ThreadSwitches() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return -1
	}
	return ru.Nvcsw + ru.Nivcsw
}

// MinCleanShare is the share of a calibration's slices that must run
// without a context switch for its figure to be judged: below it the
// machine was too busy (BusyDetail).
const MinCleanShare = 0.25

// BusyDetail says why a figure was not judged: clean of all slices ran
// without a context switch.
func BusyDetail(clean, all int) string {
	return fmt.Sprintf("not judged: the machine was too busy, only %d of %d slices ran without a context switch (at least %.0f%% must); rerun on a quieter machine",
		clean, all, 100*MinCleanShare)
}

// Calibrate measures the harness's own costs on this machine: the timer,
// the hot path on the null provider against one timer read, the cgo calls
// per operation, the sim device's uncontended reg+unreg pair, and whether
// the sim cost model reports the cost it was given. dir holds the
// scratch sim devices.
//
// Each figure is measured first and held to its target after, so that
// the targets can be read, and tested, apart from the devices.
func Calibrate(dir string) ([]Measurement, error) {
	timer := TimerOverheadNS()
	out := []Measurement{{Name: "timer_read", Value: timer, Unit: "ns", OK: true, Detail: TimerName + ", median of back-to-back reads"}}
	nullOp, callsPerOp, clean, err := measureNullOp(dir)
	if err != nil {
		return nil, err
	}
	null := judgeNullOp(nullOp, timer, callsPerOp)
	null[1] = JudgeUnlessBusy(null[1], clean, calibrationRounds)
	out = append(out, null...)
	pair, clean, err := measureSimPair(dir)
	if err != nil {
		return nil, err
	}
	out = append(out, JudgeUnlessBusy(judgeSimPair(pair), clean, calibrationRounds))
	p50, err := measureSimDestroy(dir)
	if err != nil {
		return nil, err
	}
	return append(out, judgeSimDestroy(p50)), nil
}

// The sizes of the calibration runs: nullBatch operations per batch on
// null, simQPs QPs per batch on sim, calibrationRounds batches (or batch
// pairs) each, the median over them reported; destroyQPs last unregs with
// the cost model's destroy cost set to calibrationDestroy.
const (
	nullBatch          = 4096
	simQPs             = 1024
	calibrationRounds  = 64
	destroyQPs         = 500
	calibrationDestroy = 100 * time.Microsecond
)

// JudgeUnlessBusy is m, judged, unless fewer than MinCleanShare of its
// all slices (clean) ran without a context switch: then it is Busy, not
// judged, and says so.
func JudgeUnlessBusy(m Measurement, clean, all int) Measurement {
	if m.Target != "" && float64(clean) < MinCleanShare*float64(all) {
		m.OK, m.Busy, m.Detail = false, true, BusyDetail(clean, all)
	}
	return m
}

// measureNullOp is the null provider's reported latency per operation, the
// loop's own cost, as the median over batches of their mean, of the
// batches the thread ran without a context switch (clean; all of them when
// none did); and the cgo calls the Go runtime counted per operation
// meanwhile.
func measureNullOp(dir string) (nullOp, callsPerOp float64, clean int, err error) {
	dom, closeDom, err := calibrationDomain(Options{Provider: "null"}, dir)
	if err != nil {
		return 0, 0, 0, err
	}
	defer closeDom()
	runtime.LockOSThread() // ThreadSwitches counts this thread's
	defer runtime.UnlockOSThread()
	b := NewBatch(nullBatch)
	var per, switched []float64
	calls0 := runtime.NumCgoCall()
	for range calibrationRounds {
		sw := ThreadSwitches()
		if _, err := dom.RunBatch(OpReg, b, nullBatch); err != nil {
			return 0, 0, 0, err
		}
		if ThreadSwitches() == sw {
			per = append(per, float64(totalNS(b))/nullBatch)
		} else {
			switched = append(switched, float64(totalNS(b))/nullBatch)
		}
	}
	callsPerOp = float64(runtime.NumCgoCall()-calls0) / (nullBatch * calibrationRounds)
	if len(per) == 0 {
		return stats.Median(switched), callsPerOp, 0, nil
	}
	return stats.Median(per), callsPerOp, len(per), nil
}

// measureSimPair is the sim device's uncontended reg+unreg pair, the
// median over rounds of its mean, of the rounds run without a context
// switch (clean; all of them when none did). A holder, a second
// registrant on the same device, creates the QPs and keeps them alive, so
// the measured unregs never destroy one.
func measureSimPair(dir string) (pair float64, clean int, err error) {
	simDir := filepath.Join(dir, "sim-pair")
	holder, closeHolder, err := calibrationDomain(Options{Provider: "sim", Sim: SimOptions{Dir: simDir}}, dir)
	if err != nil {
		return 0, 0, err
	}
	defer closeHolder()
	user, closeUser, err := calibrationDomain(Options{Provider: "sim", Sim: SimOptions{Dir: simDir}}, dir)
	if err != nil {
		return 0, 0, err
	}
	defer closeUser()
	b := NewBatch(simQPs)
	if failed, err := holder.RunBatch(OpCreate, b, simQPs); err != nil || failed != 0 {
		return 0, 0, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	runtime.LockOSThread() // ThreadSwitches counts this thread's
	defer runtime.UnlockOSThread()
	var per, switched []float64
	for range calibrationRounds {
		sw := ThreadSwitches()
		var sum uint64
		for _, op := range []Op{OpReg, OpUnreg} {
			if failed, err := user.RunBatch(op, b, simQPs); err != nil || failed != 0 {
				return 0, 0, fmt.Errorf("calibrate: sim %v: %d failed, %v", op, failed, err)
			}
			sum += totalNS(b)
		}
		if ThreadSwitches() == sw {
			per = append(per, float64(sum)/simQPs)
		} else {
			switched = append(switched, float64(sum)/simQPs)
		}
	}
	// The holder's unregs destroy the QPs; one that fails leaves the
	// scratch device dirty and says the sim is broken.
	if failed, err := holder.RunBatch(OpUnreg, b, simQPs); err != nil || failed != 0 {
		return 0, 0, fmt.Errorf("calibrate: sim unreg by the creator: %d failed, %v", failed, err)
	}
	if len(per) == 0 {
		return stats.Median(switched), 0, nil
	}
	return stats.Median(per), len(per), nil
}

// measureSimDestroy is the p50 of the last unreg on a sim device whose
// cost model charges calibrationDestroy for the destruction it triggers.
func measureSimDestroy(dir string) (float64, error) {
	dom, closeDom, err := calibrationDomain(Options{Provider: "sim",
		Sim: SimOptions{Dir: filepath.Join(dir, "sim-cost"), Cost: Cost{Destroy: calibrationDestroy}}}, dir)
	if err != nil {
		return 0, err
	}
	b := NewBatch(destroyQPs)
	if failed, err := dom.RunBatch(OpCreate, b, destroyQPs); err != nil || failed != 0 {
		closeDom()
		return 0, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	if _, err := dom.RunBatch(OpUnreg, b, destroyQPs); err != nil {
		closeDom()
		return 0, fmt.Errorf("calibrate: sim unreg: %v", err)
	}
	closeDom()
	lat := make([]float64, 0, destroyQPs)
	for i := range destroyQPs {
		if b.Errno(i) != 0 || b.Destroyed(i) != WasDestroyed {
			return 0, fmt.Errorf("calibrate: the creator's unreg did not destroy the QP (errno %d)", b.Errno(i))
		}
		lat = append(lat, float64(b.NS[i]))
	}
	return stats.Median(lat), nil
}

// totalNS is the time of all the operations of b.
func totalNS(b *Batch) uint64 {
	var sum uint64
	for _, ns := range b.NS {
		sum += ns
	}
	return sum
}

// judgeNullOp holds the null op to one timer read (a ratio, so a loaded
// machine slows both alike) and the cgo calls to far fewer than one per
// operation: a batch is one call.
func judgeNullOp(nullOp, timer, callsPerOp float64) []Measurement {
	perRead := nullOp / timer
	return []Measurement{
		{Name: "null_op", Value: nullOp, Unit: "ns", OK: true, Detail: "reported latency of an operation that does nothing"},
		{Name: "null_op_per_timer_read", Value: perRead, Unit: "x", Target: "<= 1.5", OK: perRead <= 1.5,
			Detail: "the batch loop adds little beyond the timer itself"},
		{Name: "cgo_calls_per_op", Value: callsPerOp, Unit: "calls", Target: "<= 0.001", OK: callsPerOp <= 0.001,
			Detail: fmt.Sprintf("counted by the Go runtime over %d batches of %d", calibrationRounds, nullBatch)},
	}
}

// judgeSimPair holds the sim's reg+unreg pair to a fixed bound: the sim
// must stay cheap beside the costs it models.
func judgeSimPair(pair float64) Measurement {
	return Measurement{Name: "sim_reg_unreg_pair", Value: pair, Unit: "ns", Target: "<= 250", OK: pair <= 250,
		Detail: "uncontended, no cost model"}
}

// judgeSimDestroy holds the last unreg's p50 to the destroy cost the sim
// was given: never below it, and at most 5% above.
func judgeSimDestroy(p50 float64) Measurement {
	over := (p50/float64(calibrationDestroy) - 1) * 100
	return Measurement{Name: "sim_destroy_100us_p50_over", Value: over, Unit: "%", Target: "0..+5", OK: over >= 0 && over <= 5,
		Detail: fmt.Sprintf("last unreg p50 %.1fus with destroy=100us", p50/1000)}
}

// calibrationDomain opens a registrant on a scratch domain in dir, one
// domain per device, so the measurements do not share one.
func calibrationDomain(opts Options, dir string) (*Domain, func(), error) {
	dev, err := Open(opts)
	if err != nil {
		return nil, nil, err
	}
	name := opts.Provider + "-domain"
	if opts.Sim.Dir != "" {
		name = filepath.Base(opts.Sim.Dir) + "-domain"
	}
	dom, err := dev.OpenDomain(filepath.Join(dir, name), true)
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	return dom, func() { dom.Close(); dev.Close() }, nil
}
