package report

import (
	"fmt"
	"strconv"

	"github.com/xrcbench/xrcbench/results"
)

// fwCommands pairs each firmware command the engine snapshots (mlx5
// debugfs, recorded in provider_detail as fw_cmd.<CMD>.n and .mean_ns)
// with the operation kind whose latency it is part of.
var fwCommands = []struct{ cmd, kind string }{
	{"CREATE_QP", results.OpCreate},
	{"DESTROY_QP", results.OpUnregLast},
}

// FirmwareNotes sets the adapter's own command time beside the latency
// measured from user space. It shows no share of the latency: the counters
// span the whole run (warm-up, the holders' creates, teardown and the leak
// probe too), not the measured window, so their mean is not the mean of the
// measured operations. It says how many commands that was against how many
// operations were measured, and the error bound of the kernel's integer
// average. Nothing when the run did not look (sim, null); one line saying
// why when the counters were not readable.
func FirmwareNotes(r *results.Result) []string {
	d := r.Environment.ProviderDetail
	if why, ok := d["fw_cmd"]; ok {
		return []string{"firmware command counters: " + why}
	}
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
			note += fmt.Sprintf("; %d %s measured, p50 %s; no firmware share is shown, as the windows differ",
				s.Count, c.kind, FormatNS(float64(s.NS.P50)))
		}
		notes = append(notes, note)
	}
	return notes
}
