package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportCLI(t *testing.T) {
	lc := fixture("lifecycle")
	tmp := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no format", []string{"export", lc}, 2, "needs --format"},
		{"bad format", []string{"export", lc, "--format", "xml"}, 2, `--format "xml"`},
		{"gab needs out", []string{"export", lc, "--format", "github-action-benchmark"}, 2, "give --out"},
		{"no run", []string{"export", "--format", "csv"}, 2, "at least one RUN_DIR"},
		{"missing folder", []string{"export", filepath.Join(tmp, "nope"), "--format", "csv"}, 2, "no such run folder"},
		{"ops as metric", []string{"export", lc, "--format", "bencher", "--metric", "ops_per_sec"}, 2, "not a latency"},
		{"junit of one run", []string{"export", lc, "--format", "junit"}, 2, "give BASE_DIR and NEW_DIR"},
		{"junit bad threshold", []string{"export", lc, lc, "--format", "junit", "--threshold", "x"}, 2, "--threshold"},
		{"same workload twice", []string{"export", lc, scaled(t, "reg", 2), "--format", "bencher"}, 2, "would collide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, stderr, tc.code, tc.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q on bad input", stdout)
			}
		})
	}
	out := filepath.Join(tmp, "bench.json")
	if code, _, stderr := runCLI("export", lc, "--format", "github-action-benchmark", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for file, unit := range map[string]string{out: "ns", filepath.Join(tmp, "bench-throughput.json"): "ops/s"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var entries []struct{ Name, Unit string }
		if err := json.Unmarshal(data, &entries); err != nil || len(entries) == 0 || entries[0].Unit != unit {
			t.Errorf("%s: %v, %+v", file, err, entries)
		}
	}
	code, stdout, stderr := runCLI("export", lc, "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "run,run_id,started,") {
		t.Errorf("csv to stdout: exit %d, %q, %s", code, stdout[:min(len(stdout), 80)], stderr)
	}
	code, stdout, stderr = runCLI("export", lc, scaled(t, "reg", 1.5), "--format", "junit")
	if code != 0 || !strings.Contains(stdout, "<testsuites") || !strings.Contains(stdout, `failures="1"`) || !strings.Contains(stdout, `<testcase name="reg p50"`) {
		t.Errorf("junit of a +50%% reg: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
