package analysis

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// History follows a storm's makespan and finds the step in it.
func TestHistoryStormMakespan(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 24 {
		level := 1e6
		if i >= 14 {
			level = 1.1e6
		}
		r := resultstest.Storm(5, level, 0.01, uint64(10+i), []string{"storm.makespan", "storm.teardown"})
		r.Started = t0.Add(time.Duration(i) * time.Hour)
		r.Finished = r.Started.Add(time.Minute)
		dir := filepath.Join(root, fmt.Sprintf("run-%02d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(h.Series, func(s Series) bool { return s.Kind == results.StormKind && s.Metric == "makespan" })
	if i < 0 {
		t.Fatalf("series %+v: no storm.makespan", h.Series)
	}
	s := h.Series[i]
	if len(s.Points) != 24 || len(s.ChangePoints) != 1 || !s.ChangePoints[0].Regression || s.ChangePoints[0].Index < 13 || s.ChangePoints[0].Index > 15 {
		t.Errorf("makespan series: %d points, change points %+v; want one regression at run 14±1", len(s.Points), s.ChangePoints)
	}
	if !h.Regressed() {
		t.Error("Regressed() false after a +10% makespan step")
	}
}
