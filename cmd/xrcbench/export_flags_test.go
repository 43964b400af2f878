package main

import (
	"errors"
	"strings"
	"testing"
)

// export's flags are checked before any run folder is read: each bad
// value or combination is bad usage (exit 2) naming what is wrong.
func TestExportFlagsPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   exportFlags
		runs    int
		wantErr string // "" for accepted
		metrics int
	}{
		{"csv", exportFlags{format: "csv", metrics: "p50,p99", threshold: "5%"}, 3, "", 2},
		{"bencher", exportFlags{format: "bencher", metrics: "p999", threshold: "5%"}, 1, "", 1},
		{"gab with a file", exportFlags{format: "github-action-benchmark", out: "b.json", metrics: "p50", threshold: "5%"}, 1, "", 1},
		{"junit of two", exportFlags{format: "junit", metrics: "p50", threshold: "10", gates: "reg.p99"}, 2, "", 1},
		{"no format", exportFlags{metrics: "p50", threshold: "5%"}, 1, "export needs --format", 0},
		{"unknown format", exportFlags{format: "xml", metrics: "p50", threshold: "5%"}, 1, `--format "xml"`, 0},
		{"junit of three", exportFlags{format: "junit", metrics: "p50", threshold: "5%"}, 3, "give BASE_DIR and NEW_DIR, got 3", 0},
		{"gab without a file", exportFlags{format: "github-action-benchmark", metrics: "p50", threshold: "5%"}, 1, "give --out FILE", 0},
		{"threshold", exportFlags{format: "csv", metrics: "p50", threshold: "much"}, 1, "--threshold", 0},
		{"gate", exportFlags{format: "junit", metrics: "p50", threshold: "5%", gates: "p50"}, 2, "--gate", 0},
		{"not a latency", exportFlags{format: "bencher", metrics: "ops_per_sec", threshold: "5%"}, 1, "not a latency", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.flags.plan(tc.runs)
			if tc.wantErr != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (%T), want a usage error containing %q", err, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.format != tc.flags.format || p.out != tc.flags.out || len(p.metrics) != tc.metrics || len(p.gates) != strings.Count(tc.flags.gates, ".") {
				t.Errorf("plan %+v from %+v", p, tc.flags)
			}
		})
	}
}
