package verbs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/stats"
)

// The measuring loops of xrcbench calibrate that need the providers
// themselves. They only measure: the sizes come from internal/calibrate,
// which holds the figures to their targets.

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

// MeasureNullOp is the null provider's reported latency per operation, the
// loop's own cost, as the median over rounds batches of batch operations
// of their mean, of the batches the thread ran without a context switch
// (clean; all of them when none did); and the cgo calls the Go runtime
// counted per operation meanwhile. dir holds the scratch domain.
func MeasureNullOp(dir string, batch, rounds int) (nullOp, callsPerOp float64, clean int, err error) {
	dom, closeDom, err := calibrationDomain(Options{Provider: "null"}, dir)
	if err != nil {
		return 0, 0, 0, err
	}
	defer closeDom()
	runtime.LockOSThread() // ThreadSwitches counts this thread's
	defer runtime.UnlockOSThread()
	b := NewBatch(batch)
	var per, switched []float64
	calls0 := runtime.NumCgoCall()
	for range rounds {
		sw := ThreadSwitches()
		if _, err := dom.RunBatch(OpReg, b, batch); err != nil {
			return 0, 0, 0, err
		}
		if ThreadSwitches() == sw {
			per = append(per, float64(totalNS(b))/float64(batch))
		} else {
			switched = append(switched, float64(totalNS(b))/float64(batch))
		}
	}
	callsPerOp = float64(runtime.NumCgoCall()-calls0) / float64(batch*rounds)
	if len(per) == 0 {
		return stats.Median(switched), callsPerOp, 0, nil
	}
	return stats.Median(per), callsPerOp, len(per), nil
}

// MeasureSimPair is the sim device's uncontended reg+unreg pair on qps
// QPs, the median over rounds of its mean, of the rounds run without a
// context switch (clean; all of them when none did). A holder, a second
// registrant on the same device, creates the QPs and keeps them alive, so
// the measured unregs never destroy one. dir holds the scratch device.
func MeasureSimPair(dir string, qps, rounds int) (pair float64, clean int, err error) {
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
	b := NewBatch(qps)
	if failed, err := holder.RunBatch(OpCreate, b, qps); err != nil || failed != 0 {
		return 0, 0, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	runtime.LockOSThread() // ThreadSwitches counts this thread's
	defer runtime.UnlockOSThread()
	var per, switched []float64
	for range rounds {
		sw := ThreadSwitches()
		var sum uint64
		for _, op := range []Op{OpReg, OpUnreg} {
			if failed, err := user.RunBatch(op, b, qps); err != nil || failed != 0 {
				return 0, 0, fmt.Errorf("calibrate: sim %v: %d failed, %v", op, failed, err)
			}
			sum += totalNS(b)
		}
		if ThreadSwitches() == sw {
			per = append(per, float64(sum)/float64(qps))
		} else {
			switched = append(switched, float64(sum)/float64(qps))
		}
	}
	// The holder's unregs destroy the QPs; one that fails leaves the
	// scratch device dirty and says the sim is broken.
	if failed, err := holder.RunBatch(OpUnreg, b, qps); err != nil || failed != 0 {
		return 0, 0, fmt.Errorf("calibrate: sim unreg by the creator: %d failed, %v", failed, err)
	}
	if len(per) == 0 {
		return stats.Median(switched), 0, nil
	}
	return stats.Median(per), len(per), nil
}

// MeasureSimDestroy is the p50 of the last unreg of qps QPs on a sim
// device whose cost model charges destroy for the destruction it
// triggers. dir holds the scratch device.
func MeasureSimDestroy(dir string, qps int, destroy time.Duration) (float64, error) {
	dom, closeDom, err := calibrationDomain(Options{Provider: "sim",
		Sim: SimOptions{Dir: filepath.Join(dir, "sim-cost"), Cost: Cost{Destroy: destroy}}}, dir)
	if err != nil {
		return 0, err
	}
	b := NewBatch(qps)
	if failed, err := dom.RunBatch(OpCreate, b, qps); err != nil || failed != 0 {
		closeDom()
		return 0, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	if _, err := dom.RunBatch(OpUnreg, b, qps); err != nil {
		closeDom()
		return 0, fmt.Errorf("calibrate: sim unreg: %v", err)
	}
	closeDom()
	lat := make([]float64, 0, qps)
	for i := range qps {
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
