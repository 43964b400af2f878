package verbs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"
)

// Measurement is one figure of Calibrate, with the target it is held to
// (none for figures that are only informative: they are always OK).
// Targets that depend on the machine are ratios to a figure measured in the
// same run (the hot path against one timer read), so they mean the same on
// a noisy shared machine as on a quiet one; the sim pair's 250 ns and the
// cost model's +5% are fixed bounds, which a slow or loaded machine can miss.
type Measurement struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target"` // e.g. "<= 1.5"
	OK     bool    `json:"ok"`
	Detail string  `json:"detail,omitempty"`
}

// Calibrate measures the harness's own costs on this machine: the timer,
// the hot path on the null provider against one timer read, the cgo calls
// per operation, the sim device's uncontended reg+unreg pair, and whether
// the sim cost model reports the cost it was given. dir holds the
// scratch sim devices.
func Calibrate(dir string) ([]Measurement, error) {
	timer := TimerOverheadNS()
	var out []Measurement
	add := func(name string, v float64, unit, target string, ok bool, detail string) {
		out = append(out, Measurement{Name: name, Value: v, Unit: unit, Target: target, OK: ok, Detail: detail})
	}
	add("timer_read", timer, "ns", "", true, TimerName+", median of back-to-back reads")

	// null: the loop's own cost per operation, as reported.
	const batch, rounds = 4096, 64
	dom, closeDom, err := calibrationDomain(Options{Provider: "null"}, dir)
	if err != nil {
		return nil, err
	}
	b := NewBatch(batch)
	per := make([]float64, 0, rounds)
	calls0 := runtime.NumCgoCall()
	for r := 0; r < rounds; r++ {
		if _, err := dom.RunBatch(OpReg, b, batch); err != nil {
			closeDom()
			return nil, err
		}
		var sum uint64
		for _, ns := range b.NS {
			sum += ns
		}
		per = append(per, float64(sum)/batch)
	}
	callsPerOp := float64(runtime.NumCgoCall()-calls0) / (batch * rounds)
	closeDom()
	nullOp := median(per)
	add("null_op", nullOp, "ns", "", true, "reported latency of an operation that does nothing")
	add("null_op_per_timer_read", nullOp/timer, "x", "<= 1.5", nullOp/timer <= 1.5,
		"the batch loop adds little beyond the timer itself")
	add("cgo_calls_per_op", callsPerOp, "calls", "<= 0.001", callsPerOp <= 0.001,
		fmt.Sprintf("counted by the Go runtime over %d batches of %d", rounds, batch))

	// sim: an uncontended reg+unreg pair.
	simDir := filepath.Join(dir, "sim-pair")
	holder, closeHolder, err := calibrationDomain(Options{Provider: "sim", Sim: SimOptions{Dir: simDir}}, dir)
	if err != nil {
		return nil, err
	}
	user, closeUser, err := calibrationDomain(Options{Provider: "sim", Sim: SimOptions{Dir: simDir}}, dir)
	if err != nil {
		closeHolder()
		return nil, err
	}
	const qps = 1024
	b = NewBatch(qps)
	if failed, err := holder.RunBatch(OpCreate, b, qps); err != nil || failed != 0 {
		closeUser()
		closeHolder()
		return nil, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	per = per[:0]
	for r := 0; r < rounds; r++ {
		var sum uint64
		for _, op := range []Op{OpReg, OpUnreg} {
			if failed, err := user.RunBatch(op, b, qps); err != nil || failed != 0 {
				closeUser()
				closeHolder()
				return nil, fmt.Errorf("calibrate: sim %v: %d failed, %v", op, failed, err)
			}
			for _, ns := range b.NS {
				sum += ns
			}
		}
		per = append(per, float64(sum)/qps)
	}
	// The holder's unregs destroy the QPs; one that fails leaves the
	// scratch device dirty and says the sim is broken.
	failed, err := holder.RunBatch(OpUnreg, b, qps)
	closeUser()
	closeHolder()
	if err != nil || failed != 0 {
		return nil, fmt.Errorf("calibrate: sim unreg by the creator: %d failed, %v", failed, err)
	}
	pair := median(per)
	add("sim_reg_unreg_pair", pair, "ns", "<= 250", pair <= 250, "uncontended, no cost model")

	// sim cost model: the last unreg with destroy=100us.
	const destroy = 100 * time.Microsecond
	costDom, closeCost, err := calibrationDomain(Options{Provider: "sim",
		Sim: SimOptions{Dir: filepath.Join(dir, "sim-cost"), Cost: Cost{Destroy: destroy}}}, dir)
	if err != nil {
		return nil, err
	}
	b = NewBatch(500)
	if failed, err := costDom.RunBatch(OpCreate, b, 500); err != nil || failed != 0 {
		closeCost()
		return nil, fmt.Errorf("calibrate: sim create: %d failed, %v", failed, err)
	}
	if _, err := costDom.RunBatch(OpUnreg, b, 500); err != nil {
		closeCost()
		return nil, fmt.Errorf("calibrate: sim unreg: %v", err)
	}
	closeCost()
	lat := make([]float64, 0, 500)
	for i := range 500 {
		if b.Errno(i) != 0 || b.Destroyed(i) != WasDestroyed {
			return nil, fmt.Errorf("calibrate: the creator's unreg did not destroy the QP (errno %d)", b.Errno(i))
		}
		lat = append(lat, float64(b.NS[i]))
	}
	over := (median(lat)/float64(destroy) - 1) * 100
	add("sim_destroy_100us_p50_over", over, "%", "0..+5", over >= 0 && over <= 5,
		fmt.Sprintf("last unreg p50 %.1fus with destroy=100us", median(lat)/1000))
	return out, nil
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

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// CalibrationDir makes a private scratch directory for Calibrate.
func CalibrationDir() (string, error) { return os.MkdirTemp("", "xrcbench-calibrate-") }
