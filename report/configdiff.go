package report

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

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
	if !sameWorkloadSpec(a.Config.WorkloadSpec, b.Config.WorkloadSpec) {
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
	x, y := deviceName(a.Environment), deviceName(b.Environment)
	diff("device", orNone(x, x != ""), orNone(y, y != ""))
	return d
}

// sameWorkloadSpec reports whether two workload specs measure the same:
// their texts are equal (a comment counts: the text is what was run) but
// for the top-level gates and headline, which say how the runs are
// judged, not what they measure, and the description, which says what
// the spec is (the storm's came to name whose wiring it replays). Results
// of a built-in from before such a change thus still compare with those
// after.
func sameWorkloadSpec(a, b string) bool {
	if a == b {
		return true
	}
	x, xok := withoutJudging(a)
	y, yok := withoutJudging(b)
	return xok && yok && bytes.Equal(x, y)
}

// judgingKeys are a spec's top-level keys that do not change what runs.
var judgingKeys = []string{"gates", "headline", "description"}

// withoutJudging is spec re-encoded without its judgingKeys, comments
// kept; false when it is not one YAML mapping.
func withoutJudging(spec string) ([]byte, bool) {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(spec), &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	m := doc.Content[0]
	var kept []*yaml.Node
	var comments []string // of the keys taken out: a comment there is text like any other
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !slices.Contains(judgingKeys, k.Value) {
			kept = append(kept, k, v)
			continue
		}
		comments = append(comments, k.HeadComment, k.LineComment, k.FootComment, v.HeadComment, v.LineComment, v.FootComment)
	}
	m.Content = kept
	out, err := yaml.Marshal(&doc)
	return append(out, strings.Join(comments, "")...), err == nil
}
