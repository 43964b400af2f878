package calibrate

import (
	"fmt"
	"time"

	"github.com/xrcbench/xrcbench/verbs"
)

// Measurement is one figure of Run, with the target it is held to
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

// JudgeUnlessBusy is m, judged, unless fewer than MinCleanShare of its
// all slices (clean) ran without a context switch: then it is Busy, not
// judged, and says so.
func JudgeUnlessBusy(m Measurement, clean, all int) Measurement {
	if m.Target != "" && float64(clean) < MinCleanShare*float64(all) {
		m.OK, m.Busy, m.Detail = false, true, BusyDetail(clean, all)
	}
	return m
}

// Run measures the harness's costs on this machine against their targets:
// the providers' loops first (Harness), then the engine's hot path
// (Engine). dir holds the scratch devices and domains.
func Run(dir string) ([]Measurement, error) {
	out, err := Harness(dir)
	if err != nil {
		return nil, err
	}
	engine, err := Engine(dir)
	if err != nil {
		return nil, err
	}
	return append(out, engine...), nil
}

// Harness measures the harness's own costs on this machine: the timer,
// the hot path on the null provider against one timer read, the cgo calls
// per operation, the sim device's uncontended reg+unreg pair, and whether
// the sim cost model reports the cost it was given. dir holds the
// scratch sim devices.
//
// Each figure is measured first and held to its target after, so that
// the targets can be read, and tested, apart from the devices.
func Harness(dir string) ([]Measurement, error) {
	timer := verbs.TimerOverheadNS()
	out := []Measurement{{Name: "timer_read", Value: timer, Unit: "ns", OK: true, Detail: verbs.TimerName + ", median of back-to-back reads"}}
	nullOp, callsPerOp, clean, err := verbs.MeasureNullOp(dir, nullBatch, calibrationRounds)
	if err != nil {
		return nil, err
	}
	null := judgeNullOp(nullOp, timer, callsPerOp)
	null[1] = JudgeUnlessBusy(null[1], clean, calibrationRounds)
	out = append(out, null...)
	pair, clean, err := verbs.MeasureSimPair(dir, simQPs, calibrationRounds)
	if err != nil {
		return nil, err
	}
	out = append(out, JudgeUnlessBusy(judgeSimPair(pair), clean, calibrationRounds))
	p50, err := verbs.MeasureSimDestroy(dir, destroyQPs, calibrationDestroy)
	if err != nil {
		return nil, err
	}
	return append(out, judgeSimDestroy(p50)), nil
}

// The sizes of the providers' calibration runs: nullBatch operations per
// batch on null, simQPs QPs per batch on sim, calibrationRounds batches (or
// batch pairs) each, the median over them reported; destroyQPs last unregs
// with the cost model's destroy cost set to calibrationDestroy.
const (
	nullBatch          = 4096
	simQPs             = 1024
	calibrationRounds  = 64
	destroyQPs         = 500
	calibrationDestroy = 100 * time.Microsecond
)

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
