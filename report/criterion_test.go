package report

import (
	"html"
	"strings"
	"testing"
)

// TestCriterionFigure: a criterion's plot names both runs by their labels,
// draws a relative limit as a band from the baseline's median, an
// absolute one as a line, on a linear axis (latency ticks as durations,
// not decades), and the candidate in red only when it failed.
func TestCriterionFigure(t *testing.T) {
	base := synth{reps: 5, noise: 0.02, seed: 1}.run("base")
	slow := synth{reps: 5, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 1.2}}.run("cand")
	p50, _ := MetricByName("p50")
	five, limit := 5.0, 1100.0
	tests := []struct {
		name    string
		base    *Run
		cp      CriterionPlot
		want    []string
		notWant []string
	}{
		{"relative, failed", base, CriterionPlot{BaseLabel: "fw=1.0", CandLabel: "fw=1.1", RelPct: &five, Failed: true},
			[]string{"baseline fw=1.0", "candidate fw=1.1: failed", "limit: baseline median +5%", "the band the limit from the baseline's median 1.0", "#D62728", "#DDEEDD", "on a linear axis"},
			[]string{"#1F77B4", "dashed line"}},
		{"relative, passed", base, CriterionPlot{BaseLabel: "fw=1.0", CandLabel: "fw=1.1", RelPct: &five},
			[]string{"candidate fw=1.1", "#1F77B4", "#DDEEDD"}, []string{"#D62728", "failed"}},
		{"absolute", nil, CriterionPlot{CandLabel: "fw=1.1", Limit: &limit, Failed: true},
			[]string{"limit 1.1", "the dashed line the limit", "#D62728"}, []string{"baseline", "#DDEEDD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := CriterionFigure("c", "reg.p50", "reg", p50, slow, tt.base, tt.cp)
			if err != nil {
				t.Fatal(err)
			}
			svg := html.UnescapeString(string(f.SVG)) + f.Caption
			for _, w := range tt.want {
				if !strings.Contains(svg, w) {
					t.Errorf("the figure lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(svg, w) {
					t.Errorf("the figure has %q", w)
				}
			}
			// A linear axis: no decade labels beside each other (1µs, 10µs).
			if strings.Contains(svg, ">10µs<") && strings.Contains(svg, ">1µs<") {
				t.Errorf("a log axis of decades")
			}
		})
	}
}
