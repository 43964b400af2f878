package report

import (
	"fmt"
	"math"
	"strings"
	"syscall"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// fwCommands pairs each firmware command the engine snapshots (mlx5
// debugfs, recorded in the environment's firmware_commands)
// with the operation kind whose latency it is part of, and says whether a
// run's QP state makes each such operation issue one: a modify moves the
// QP to INIT (RST2INIT_QP) and, for rtr, on to RTR (INIT2RTR_QP); the
// destroy of a QP out of RESET resets it first (2RST_QP).
var fwCommands = []struct {
	cmd, kind string
	issued    func(qpState string) bool
}{
	{"CREATE_QP", results.OpCreate, always},
	{"RST2INIT_QP", results.OpModify, func(s string) bool { return s == "init" || s == "rtr" }},
	{"INIT2RTR_QP", results.OpModify, func(s string) bool { return s == "rtr" }},
	{"2RST_QP", results.OpUnregLast, func(s string) bool { return s != "reset" }},
	{"DESTROY_QP", results.OpUnregLast, always},
}

func always(string) bool { return true }

// firmwareNotes sets the adapter's own command time beside the latency
// measured from user space. It shows no share of the latency: the counters
// span the whole run (warm-up, the holders' creates, teardown and the leak
// probe too), not the measured window, so their mean is not the mean of the
// measured operations. It says how many commands that was against how many
// operations were measured, and the error bound of the kernel's integer
// average; fewer commands than measured operations that each issue one
// means the counter does not see them all, and the note says so. Nothing
// when the run did not look (sim, null); one line saying why when the
// counters were not readable.
func firmwareNotes(r *results.Result) []string {
	fw := r.Environment.Firmware
	if fw == nil {
		return nil
	}
	if fw.NotReadable != "" {
		return []string{"firmware command counters: " + fw.NotReadable}
	}
	state := r.Config.QPStateOf()
	var notes []string
	for _, c := range fwCommands {
		cmd, ok := fw.Commands[c.cmd]
		if !ok {
			continue
		}
		n, mean := cmd.N, cmd.MeanNS
		note := fmt.Sprintf("firmware %s: %d commands during the whole run (set-up, warm-up and teardown included), mean %s",
			c.cmd, n, units.FormatNS(mean))
		if n > 0 && cmd.ErrNS > 0 {
			note += fmt.Sprintf(" ± %s (the kernel's average is whole ns)", units.FormatNS(math.Ceil(cmd.ErrNS)))
		}
		if s := r.Ops[c.kind]; s.Count > 0 {
			note += fmt.Sprintf("; %d %s measured, p50 %s", s.Count, c.kind, units.FormatNS(float64(s.NS.P50)))
			switch {
			case !c.issued(state):
				note += fmt.Sprintf(", which issue none at qp_state %s", state)
			case n < uint64(s.Count):
				note += fmt.Sprintf("; fewer commands than measured %s, each of which issues one: the counter does not see them all", c.kind)
			default:
				note += "; no firmware share is shown, as the windows differ"
			}
		}
		note += failureNote(cmd.Failures)
		notes = append(notes, note)
	}
	return notes
}

// failureNote says how many of a command failed over the run and, when
// any did, how the last one did; nothing where the kernel keeps no
// failure counters.
func failureNote(f *results.FirmwareFailures) string {
	if f == nil {
		return ""
	}
	if f.Failed == 0 {
		return "; none failed"
	}
	s := fmt.Sprintf("; %d FAILED (%d with a bad mailbox status from the firmware)", f.Failed, f.FailedMboxStatus)
	var last []string
	if f.LastErrno != 0 {
		last = append(last, fmt.Sprintf("errno %d (%s)", f.LastErrno, syscall.Errno(f.LastErrno).Error()))
	}
	if f.LastMboxStatus != 0 {
		last = append(last, fmt.Sprintf("mailbox status %#x", f.LastMboxStatus))
	}
	if f.LastSyndrome != "" {
		last = append(last, "syndrome "+f.LastSyndrome)
	}
	if len(last) > 0 {
		s += ", the last " + strings.Join(last, ", ")
	}
	return s
}
