package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// TestSweepKernelLookup is the kernel's target-QP lookup by release, swept
// as a user would: one sweep over the domain's live target QPs with the
// sim's two models side by side (--sim-cost given once per model). The
// known answer is the model's own: before Linux 5.9 a registration walks
// the domain's list under its mutex, so its p50 is scan × live QPs and
// more; since 5.9 (an xarray) it does not grow with them. The plot that
// shows both is written.
func TestSweepKernelLookup(t *testing.T) {
	const scan = 2 * time.Microsecond
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "sweep")
	code, _, stderr := runProcess(exec.Command(bin, "sweep", "--workload", "steady", "--qps", "1,16,256", "--threads", "1",
		"--sim-cost", "lookup=xarray", "--sim-cost", "lookup=list,scan="+scan.String(), "--sim-max-qp", "256",
		"--iterations", "4", "--warmup", "0s", "--repetitions", "1", "--quiet", "--out", out))
	if code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	idx, err := results.LoadSweep(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Points) != 6 {
		t.Fatalf("%d points, want 6 (3 QP counts × 2 models)", len(idx.Points))
	}
	p50 := map[string]map[int]float64{} // model → live QPs → reg p50 (ns)
	for _, p := range idx.Points {
		if p.Status != results.StatusOK {
			t.Fatalf("point %s: status %s\n%s", p.Dir, p.Status, stderr)
		}
		model := "xarray"
		if strings.Contains(p.SimCost, "lookup=list") {
			model = "list"
		} else if p.SimCost != "lookup=xarray" {
			t.Fatalf("point %s: sim_cost %q, want the model it ran", p.Dir, p.SimCost)
		}
		if !strings.HasSuffix(p.Dir, map[string]string{"xarray": "-c1", "list": "-c2"}[model]) {
			t.Errorf("point folder %s: want it to end in its model's number", p.Dir)
		}
		r, err := results.Load(filepath.Join(out, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if p50[model] == nil {
			p50[model] = map[int]float64{}
		}
		p50[model][p.QPs] = float64(r.Ops["reg"].NS.P50)
	}
	for _, q := range []int{1, 16, 256} {
		want := float64(q) * float64(scan.Nanoseconds())
		// The walk is paid in full under the mutex; what a reg adds
		// besides it is well under a walk of 16 QPs even on a busy machine.
		if got := p50["list"][q]; got < want || got > 1.25*want+float64(16*scan.Nanoseconds()) {
			t.Errorf("pre-5.9 lookup, %d live QPs: reg p50 %.0f ns, want scan × QPs = %.0f ns and less than a quarter more", q, got, want)
		}
	}
	// Since 5.9 the lookup does not grow with the QPs: 256 live QPs cost a
	// reg what one does, far below one step of the walk.
	if lo, hi := p50["xarray"][1], p50["xarray"][256]; hi > 2*lo+float64(scan.Nanoseconds()) {
		t.Errorf("xarray lookup: reg p50 %.0f ns at 256 live QPs against %.0f ns at 1: it grew", hi, lo)
	}
	code, _, stderr = runProcess(exec.Command(bin, "report", out))
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	svg, err := os.ReadFile(filepath.Join(out, "plots", "sweep-qps-p50.svg"))
	if err != nil {
		t.Errorf("the plot of reg p50 against live QPs, one line per model: %v", err)
	}
	// The legend names each model as the table does: both from sweep.json.
	for _, m := range []string{"lookup=xarray", "scan=2µs,lookup=list"} {
		if !strings.Contains(string(svg), "sim cost "+m) {
			t.Errorf("the plot's legend does not name the model %q as the table does", m)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "c2 `scan=2µs,lookup=list`") {
		t.Errorf("summary.md does not name the sweep's cost models:\n%s", md)
	}
}
