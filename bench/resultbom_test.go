package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
)

// TestResultBOM: every run's result carries the bill of materials, each
// fact present or saying why not, through the run's own folder.
func TestResultBOM(t *testing.T) {
	cfg := testConfig(t, "sharded", "sim", 1, 2, 2)
	cfg.Iterations = 5
	cfg.Pin = host.PinCPU
	runOK(t, cfg)
	res, err := results.Load(filepath.Join(cfg.Out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	b := res.Environment.BOM
	if b == nil {
		t.Fatal("result.json has no environment.bom")
	}
	for _, r := range b.BOMRows() {
		if r[1] == "" {
			t.Errorf("bom %s is empty: a fact must be there or say why not", r[0])
		}
	}
	if b.Device.Driver != "n/a: sim" || !strings.HasPrefix(b.CPU.ThreadCPUs, "pinned: ") || b.KernelRelease == "" {
		t.Errorf("bom: %+v", b)
	}
}
