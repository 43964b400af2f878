package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/xrcbench/xrcbench/results"
)

// configDiff lists what differs in configuration between two runs of one
// workload, "key: before → after", in a fixed order: what the runs
// measured differs by construction there, whatever the code did. The
// device's firmware and the runs' labels are no part of it: a firmware
// is what a history (or compare --by fw) follows, not a change of setup.
func configDiff(a, b *results.Result) []string {
	var d []string
	diff := func(key string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			d = append(d, fmt.Sprintf("%s: %v → %v", key, x, y))
		}
	}
	diff("workload", a.Config.Workload, b.Config.Workload)
	if a.Config.WorkloadSpec != b.Config.WorkloadSpec {
		d = append(d, "workload spec: its text changed")
	}
	diff("provider", a.Config.Provider, b.Config.Provider)
	diff("procs", a.Config.Procs, b.Config.Procs)
	diff("threads", a.Config.Threads, b.Config.Threads)
	diff("qps", a.Config.QPs, b.Config.QPs)
	diff("qp_state", a.Config.QPStateOf(), b.Config.QPStateOf())
	diff("rate", orNone(a.Config.Rate, a.Config.Rate != 0), orNone(b.Config.Rate, b.Config.Rate != 0))
	diff("arrival", orNone(a.Config.Arrival, a.Config.Arrival != ""), orNone(b.Config.Arrival, b.Config.Arrival != ""))
	// Provider options hold the sim's cost model and semantics.
	keys := map[string]bool{}
	for k := range a.Config.ProviderOpts {
		keys[k] = true
	}
	for k := range b.Config.ProviderOpts {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, xok := a.Config.ProviderOpts[k]
		y, yok := b.Config.ProviderOpts[k]
		diff(k, orNone(x, xok), orNone(y, yok))
	}
	x, xok := a.Environment.Device["name"]
	y, yok := b.Environment.Device["name"]
	diff("device", orNone(x, xok), orNone(y, yok))
	return d
}
