package qualify

import (
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

func samplesOf(qps []int, pss []int64) []SoakSample {
	var s []SoakSample
	for i := range max(len(qps), len(pss)) {
		x := SoakSample{AtSec: float64(i + 1), LiveQPs: -1, RSSKB: 100000, PSSKB: 50000}
		if i < len(qps) {
			x.LiveQPs = qps[i]
		}
		if i < len(pss) {
			x.PSSKB = pss[i]
		}
		s = append(s, x)
	}
	return s
}

func TestQPVerdict(t *testing.T) {
	rounds := []int{0, 3, 4, 1, 0, 2, 4, 0, 3, 0, 1, 4, 0, 0, 2, 3, 0, 4, 1, 0, 0, 3, 4, 0, 2, 0, 1, 0, 3, 0}
	leak := make([]int, len(rounds))
	for i, v := range rounds {
		leak[i] = v
		if i >= 12 { // from interval 13 on, two QPs stay behind
			leak[i] += 2
		}
	}
	tests := []struct {
		name    string
		qps     []int
		leaks   *results.LeakCheck
		verdict string
		want    string
	}{
		{"rounds come back to 0", rounds, nil, Pass, "came back to 0 by the end"},
		{"a leak from interval 13", leak, nil, Fail, "above it from part 2 on (intervals 11-20, from 11s), 2 in the last"},
		{"a window inside rounds only is no leak", append([]int{0, 0, 0, 3, 3, 3}, rounds...), nil, Pass, "came back to 0"},
		{"teardown found leaked QPs", rounds, &results.LeakCheck{Checked: true, Method: "sim_inspect", Leaked: []uint32{7}}, Fail, "1 QP(s) outlived the run"},
		{"not sampled", []int{-1, -1, -1, 0, 0, 0, 0, 0}, nil, Skipped, "live QPs not sampled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := QPVerdict(samplesOf(tt.qps, nil), "sim_inspect", tt.leaks)
			if r.Verdict != tt.verdict || !strings.Contains(r.Message, tt.want) {
				t.Errorf("%s: %s, want %s and %q", tt.name, r.Verdict, tt.verdict, tt.want)
				t.Log(r.Message)
			}
		})
	}
}

func TestMemoryVerdict(t *testing.T) {
	flat := []int64{20000, 48000, 50000, 50100, 50000, 50200, 50100, 50300, 50200, 50400, 50300}
	grow := []int64{20000, 48000, 50000, 50100, 52000, 54000, 56000, 58000, 60000, 62000, 64000}
	if r := MemoryVerdict(samplesOf(nil, flat), 10); r.Verdict != Pass {
		t.Errorf("flat after start-up: %s %s", r.Verdict, r.Message)
	}
	if r := MemoryVerdict(samplesOf(nil, grow), 10); r.Verdict != Fail || !strings.Contains(r.Message, "PSS 50000 → 62000 KiB (bound 59096)") {
		t.Errorf("growing: %s %s", r.Verdict, r.Message)
	}
	if r := MemoryVerdict(samplesOf(nil, grow[:4]), 10); r.Verdict != Skipped {
		t.Errorf("too few samples: %s", r.Verdict)
	}
}

func TestDriftVerdict(t *testing.T) {
	steady := []float64{100, 110, 90, 100, 105, 95, 100, 100, 110, 90, 100, 100, 105, 95, 100, 100, 110, 100, 95, 100}
	drifting := make([]float64, len(steady))
	for i, v := range steady {
		drifting[i] = v * (1 + float64(i)/10)
	}
	if r := DriftVerdict(steady, "unreg_last", 50); r.Verdict != Pass {
		t.Errorf("steady: %s %s", r.Verdict, r.Message)
	}
	if r := DriftVerdict(drifting, "unreg_last", 50); r.Verdict != Fail || *r.Value < 100 {
		t.Errorf("drifting: %s %s", r.Verdict, r.Message)
	}
	if r := DriftVerdict(steady[:5], "unreg_last", 50); r.Verdict != Skipped {
		t.Errorf("too short: %s", r.Verdict)
	}
}
