package report

import (
	"fmt"
	"strconv"

	"github.com/xrcbench/xrcbench/results"
)

// fwCommands pairs each firmware command the engine snapshots (mlx5
// debugfs, recorded in provider_detail as fw_cmd.<CMD>.n and .mean_ns)
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

// FirmwareNotes sets the adapter's own command time beside the latency
// measured from user space. It shows no share of the latency: the counters
// span the whole run (warm-up, the holders' creates, teardown and the leak
// probe too), not the measured window, so their mean is not the mean of the
// measured operations. It says how many commands that was against how many
// operations were measured, and the error bound of the kernel's integer
// average; fewer commands than measured operations that each issue one
// means the counter does not see them all, and the note says so. Nothing
// when the run did not look (sim, null); one line saying why when the
// counters were not readable.
func FirmwareNotes(r *results.Result) []string {
	d := r.Environment.ProviderDetail
	if why, ok := d["fw_cmd"]; ok {
		return []string{"firmware command counters: " + why}
	}
	state := r.Config.QPStateOf()
	var notes []string
	for _, c := range fwCommands {
		n, errN := strconv.ParseUint(d["fw_cmd."+c.cmd+".n"], 10, 64)
		mean, errM := strconv.ParseFloat(d["fw_cmd."+c.cmd+".mean_ns"], 64)
		if errN != nil || errM != nil {
			continue
		}
		note := fmt.Sprintf("firmware %s: %d commands during the whole run (set-up, warm-up and teardown included), mean %s",
			c.cmd, n, FormatNS(mean))
		if e, err := strconv.ParseFloat(d["fw_cmd."+c.cmd+".err_ns"], 64); err == nil && n > 0 {
			note += fmt.Sprintf(" ± %s (the kernel's average is whole ns)", FormatNS(e))
		}
		if s := r.Ops[c.kind]; s.Count > 0 {
			note += fmt.Sprintf("; %d %s measured, p50 %s", s.Count, c.kind, FormatNS(float64(s.NS.P50)))
			switch {
			case !c.issued(state):
				note += fmt.Sprintf(", which issue none at qp_state %s", state)
			case n < uint64(s.Count):
				note += fmt.Sprintf("; fewer commands than measured %s, each of which issues one: the counter does not see them all", c.kind)
			default:
				note += "; no firmware share is shown, as the windows differ"
			}
		}
		notes = append(notes, note)
	}
	return notes
}
