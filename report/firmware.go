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
// measured from user space, so a vendor sees the firmware share of a
// create or a destroy. Nothing when the run did not look (sim, null); one
// line saying why when the counters were not readable.
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
		note := fmt.Sprintf("firmware %s: %d commands during the run, mean %s", c.cmd, n, FormatNS(mean))
		if s := r.Ops[c.kind]; s.Count > 0 && s.NS.P50 > 0 && n > 0 {
			note += fmt.Sprintf("; measured %s p50 %s, of which the firmware is about %.0f%%",
				c.kind, FormatNS(float64(s.NS.P50)), 100*mean/float64(s.NS.P50))
		}
		notes = append(notes, note)
	}
	return notes
}
