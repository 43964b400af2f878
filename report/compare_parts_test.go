package report

import (
	"slices"
	"testing"
)

// Kinds in both runs are compared, in base's order; a kind in one run
// only is a note, not a row.
func TestCommonKinds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		base, new   []string
		kinds, note []string
	}{
		{"same", []string{"reg", "unreg"}, []string{"reg", "unreg"}, []string{"reg", "unreg"}, nil},
		{"base's order", []string{"reg", "unreg"}, []string{"unreg", "reg"}, []string{"reg", "unreg"}, nil},
		{"one side only", []string{"create", "reg"}, []string{"reg", "modify"}, []string{"reg"}, []string{"create only in base", "modify only in new"}},
		{"nothing shared", []string{"reg"}, []string{"create"}, nil, []string{"reg only in base", "create only in new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds, notes := commonKinds(tc.base, tc.new)
			if !slices.Equal(kinds, tc.kinds) || !slices.Equal(notes, tc.note) {
				t.Errorf("commonKinds = %q, %q; want %q, %q", kinds, notes, tc.kinds, tc.note)
			}
		})
	}
}

// A gated metric is always a row of its kind, after the metrics asked
// for, and never twice.
func TestRowMetrics(t *testing.T) {
	p50, _ := MetricByName("p50")
	p99, _ := MetricByName("p99")
	names := func(ms []Metric) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		metrics []Metric
		gates   []Gate
		kind    string
		want    []string
	}{
		{"asked only", []Metric{p99}, nil, "reg", []string{"p99"}},
		{"gate added", []Metric{p99}, []Gate{{"reg", "p50"}}, "reg", []string{"p99", "p50"}},
		{"gate already asked", []Metric{p50, p99}, []Gate{{"reg", "p50"}}, "reg", []string{"p50", "p99"}},
		{"another kind's gate", []Metric{p99}, []Gate{{"unreg", "p50"}}, "reg", []string{"p99"}},
		{"gates only", nil, []Gate{{"reg", "p99"}, {"reg", "p50"}}, "reg", []string{"p99", "p50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(rowMetrics(tc.metrics, tc.gates, tc.kind))
			if !slices.Equal(got, tc.want) {
				t.Errorf("rowMetrics = %q, want %q", got, tc.want)
			}
			if len(tc.metrics) > 0 && &rowMetrics(tc.metrics, tc.gates, tc.kind)[0] == &tc.metrics[0] {
				t.Error("rowMetrics returned the caller's slice: adding a gate would write into it")
			}
		})
	}
}

// The verdict of a tested row: significance first (a gated row on its
// adjusted p), then the threshold in the metric's own direction.
func TestJudge(t *testing.T) {
	p50, _ := MetricByName("p50")
	var higher Metric
	for _, m := range allMetrics {
		if m.BetterHigher {
			higher = m
			break
		}
	}
	if !higher.BetterHigher {
		t.Fatal("no metric where higher is better")
	}
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name        string
		row         CompareRow
		verdict     string
		significant bool
		floorNS     float64
	}{
		{"not tested", CompareRow{metric: p50, Verdict: verdictNoData}, verdictNoData, false, 0},
		{"too few keeps its verdict", CompareRow{metric: p50, P: f(0.001), PAdj: f(0.001), Gated: true, DeltaPct: f(50), Verdict: VerdictTooFew}, VerdictTooFew, false, 0},
		{"not significant", CompareRow{metric: p50, P: f(0.2), DeltaPct: f(50)}, verdictSame, false, 0},
		{"slower beyond the threshold", CompareRow{metric: p50, P: f(0.01), DeltaPct: f(20)}, VerdictRegression, true, 0},
		{"faster beyond the threshold", CompareRow{metric: p50, P: f(0.01), DeltaPct: f(-20)}, verdictImprovement, true, 0},
		{"within the threshold", CompareRow{metric: p50, P: f(0.01), DeltaPct: f(3)}, verdictSmall, true, 0},
		{"no change to measure (base 0)", CompareRow{metric: p50, P: f(0.01)}, verdictSmall, true, 0},
		{"more is better: fewer is a regression", CompareRow{metric: higher, P: f(0.01), DeltaPct: f(-20)}, VerdictRegression, true, 0},
		{"gated: the adjusted p decides", CompareRow{metric: p50, Gated: true, P: f(0.01), PAdj: f(0.2), DeltaPct: f(20)}, verdictSame, false, 0},
		{"at alpha is significant", CompareRow{metric: p50, P: f(0.05), DeltaPct: f(20)}, VerdictRegression, true, 0},
		// The audit's false failure: one 10ns step of the timer between
		// tied values is +14.3%, and under two timer reads (2 × 25ns).
		{"a change the timer cannot resolve", CompareRow{metric: p50, P: f(0.0079), DeltaPct: f(14.3), Base: Center{Median: 70}, New: Center{Median: 80}}, VerdictUnderFloor, true, 50},
		{"over the floor", CompareRow{metric: p50, P: f(0.0079), DeltaPct: f(20), Base: Center{Median: 10000}, New: Center{Median: 12000}}, VerdictRegression, true, 50},
		{"a rate has no floor", CompareRow{metric: higher, P: f(0.01), DeltaPct: f(-20), Base: Center{Median: 100}, New: Center{Median: 80}}, VerdictRegression, true, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := tc.row
			judge(&row, 0.05, 5, tc.floorNS)
			if row.Verdict != tc.verdict || row.Significant != tc.significant {
				t.Errorf("verdict %q significant %v; want %q %v", row.Verdict, row.Significant, tc.verdict, tc.significant)
			}
		})
	}
}
