package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/xrcbench/xrcbench/results"
)

// ConfigDiff lists what differs in the harness's configuration between
// two runs, "key: before → after", in a fixed order: the workload (its
// name and text), provider, processes, threads, QPs, QP state, the open
// loop's rate and arrival, the provider's options (the sim's cost model
// and semantics) and the device. Runs that differ there measured
// different things by construction. The device's own facts are not here:
// its firmware and the test double's cost model (which stands in for a
// device) are what a comparison or a history is for, so a step across a
// firmware change is the firmware's, never excused as a configuration's.
func ConfigDiff(a, b *results.Result) []string {
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
	keys := maps.Clone(a.Config.ProviderOpts)
	if keys == nil {
		keys = map[string]string{}
	}
	maps.Copy(keys, b.Config.ProviderOpts)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, xok := a.Config.ProviderOpts[k]
		y, yok := b.Config.ProviderOpts[k]
		diff(k, orNone(x, xok), orNone(y, yok))
	}
	x, xok := a.Environment.Device.Fact("name")
	y, yok := b.Environment.Device.Fact("name")
	diff("device", orNone(x, xok), orNone(y, yok))
	return d
}
