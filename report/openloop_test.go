package report

import (
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// An open loop's summary puts each kind's response times under its service
// times, says what became of the schedule, and names a saturated run; a
// closed loop's summary has none of it.
func TestOpenLoopMarkdown(t *testing.T) {
	lat := func(p50 int64) results.Latency {
		return results.Latency{P50: p50, P90: 2 * p50, P99: 3 * p50, P999: 4 * p50, Max: 5 * p50}
	}
	resp := lat(20_000)
	r := &results.Result{Ops: map[string]results.OpStats{"reg": {Count: 10, NS: lat(10_000), ResponseNS: &resp}},
		OpenLoop: &results.OpenLoop{Arrival: "poisson", RequestedOpsPerSec: 25000, AchievedOpsPerSec: 12000, Saturated: true,
			BacklogEndNS: 3_000_000, BacklogMaxNS: 4_000_000, Waits: 7, WakeLateMeanNS: 1500, WakeLateMaxNS: 9000}}
	run := &Run{Result: r, Kinds: []string{"reg"}}
	var b strings.Builder
	writeOpenLoop(&b, run)
	got := b.String()
	for _, want := range []string{"poisson arrivals", "25.0k/s requested", "12.0k/s achieved", "**saturated**",
		"backlog at the end 3.00ms (at most 4.00ms)", "7 waits", "| reg | service | 10.0µs | 20.0µs | 30.0µs | 40.0µs | 50.0µs |",
		"| reg | response | 20.0µs | 40.0µs | 60.0µs | 80.0µs | 100µs |"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	r.OpenLoop = nil
	b.Reset()
	writeOpenLoop(&b, run)
	if b.Len() != 0 {
		t.Errorf("a closed loop's summary says %q", b.String())
	}
	if m, ok := MetricByName("response_p99"); !ok || m.Get(r.Ops["reg"]) != 60_000 {
		t.Errorf("metric response_p99 = %v, want 60µs", m.Get(r.Ops["reg"]))
	}
}
