package results

import (
	"fmt"
	"slices"
	"strings"
)

// StormKind names a storm's own figures in a gate ("storm.makespan"): they
// are per repetition, as an op kind's are, but of the whole storm, not of
// an operation.
const StormKind = "storm"

// Metrics a gate may name ("reg.p50", "storm.makespan"). OpMetrics are of
// an op kind's OpStats in each repetition; StormMetrics of Storm's
// per-repetition figures: MakespanNS and TeardownNS. report defines how
// each is read and shown.
var (
	OpMetrics    = []string{"p50", "p90", "p99", "p999", "max", "mean", "ops_per_sec", "response_p50", "response_p99", "response_p999", "response_max"}
	StormMetrics = []string{"makespan", "teardown"}
)

// CheckGate checks a gate "KIND.METRIC" against the op kinds a workload
// measures (storm: whether it is a storm): the metric must be one of that
// kind's.
func CheckGate(gate string, kinds []string, storm bool) error {
	kind, metric, ok := strings.Cut(gate, ".")
	if !ok || kind == "" {
		return fmt.Errorf("gate %q: want KIND.METRIC, such as reg.p50", gate)
	}
	switch {
	case kind == StormKind && !storm:
		return fmt.Errorf("gate %q: only a storm has %s figures", gate, StormKind)
	case kind == StormKind:
		if !slices.Contains(StormMetrics, metric) {
			return fmt.Errorf("gate %q: a storm's metrics are %s", gate, strings.Join(StormMetrics, ", "))
		}
	case !slices.Contains(kinds, kind):
		return fmt.Errorf("gate %q: op kind %q is not one the workload measures (%s)", gate, kind, strings.Join(kinds, ", "))
	case !slices.Contains(OpMetrics, metric):
		return fmt.Errorf("gate %q: unknown metric %q; want one of %s", gate, metric, strings.Join(OpMetrics, ", "))
	}
	return nil
}

// GatesOf are the metrics the run's workload declared its comparisons
// gate on (Config.Gates). Results that predate declared gates get those
// their workload then gated on: by its name for the built-ins, the
// makespan for a storm, else the p50 of every kind it measured (kinds).
func (c Config) GatesOf(kinds []string, storm bool) []string {
	if c.Gates != nil {
		return c.Gates
	}
	var ks []string
	switch c.Workload {
	case "steady", "sharded":
		ks = []string{OpReg, OpUnreg}
	case "lifecycle":
		ks = []string{OpReg, OpUnregLast}
	case "churn":
		ks = []string{OpCreate, OpUnregLast}
	case "errors":
		ks = []string{OpRegInvalid, OpRegForeign}
	default:
		if storm {
			return []string{StormKind + ".makespan"}
		}
		ks = kinds
	}
	var gs []string
	for _, k := range ks {
		gs = append(gs, k+".p50")
	}
	return gs
}

// HeadlineOf is the figure the run's workload exists to measure
// (Config.Headline), which its report leads with; for results that
// predate it, a storm's makespan, else none.
func (c Config) HeadlineOf(storm bool) string {
	switch {
	case c.Headline != "":
		return c.Headline
	case storm:
		return StormKind + ".makespan"
	}
	return ""
}
