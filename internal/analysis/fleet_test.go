package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// fleetNode is a synthetic node of a fleet: its reg latencies are
// n samples spread around p50ns (every tenth at 3x: a tail).
type fleetNode struct {
	name, status, fw string
	rank             int
	p50ns            int64
	garbage          bool // result.json that is no result at all
	// reps are per-repetition reg and unreg p50s: the run's repetitions,
	// p99 at 3× and ops/s the inverse of each.
	reps, unregReps []int64
}

func writeFleetNode(t *testing.T, dir string, n fleetNode, nodeList []string) {
	t.Helper()
	folder := filepath.Join(dir, n.name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if n.garbage {
		if err := os.WriteFile(filepath.Join(folder, results.FileName), []byte("{\"schema\": 7"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	r := &results.Result{
		Schema: results.Schema, RunID: "run-" + n.name, Status: n.status,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 3, 4, 15, 0, time.UTC),
		Config:      results.Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1, QPs: 4},
		Environment: results.Environment{Kernel: "Linux 6.1.0 x86_64", Device: &results.Device{Name: "mlx5_0", FWVer: n.fw, Driver: "mlx5_core", NUMANode: -1}},
		Ops:         map[string]results.OpStats{},
		Histograms:  map[string]string{},
		Fleet:       &results.Fleet{Launcher: "slurm", JobID: "4711", Node: n.name, Rank: n.rank, Nodes: len(nodeList), NodeList: nodeList},
	}
	if n.status != results.StatusOK {
		r.Error = "worker 1 died"
	}
	if n.status != results.StatusFailed {
		for _, kind := range []string{results.OpReg, results.OpUnreg} {
			h := results.NewHistogram()
			base := n.p50ns
			if kind == results.OpUnreg {
				base = 800 // every node alike
			}
			for i := int64(0); i < 1000; i++ {
				v := base + (i%7)*base/50
				if i%10 == 9 {
					v = 3 * base
				}
				h.RecordValue(v)
			}
			enc, err := results.EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			r.Histograms[kind] = enc
			s := results.OpStats{Count: h.TotalCount(), NS: results.Summarize(h)}
			s.OpsPerSec = 1e9 / h.Mean()
			r.Ops[kind] = s
		}
	}
	for i := range n.reps {
		rep := results.Repetition{Index: i + 1, Ops: map[string]results.OpStats{}}
		for kind, v := range map[string]int64{results.OpReg: n.reps[i], results.OpUnreg: n.unregReps[i]} {
			rep.Ops[kind] = results.OpStats{Count: 1000, NS: results.Latency{Min: v / 2, P50: v, P90: 2 * v, P99: 3 * v, P999: 3 * v, Max: 3 * v}, OpsPerSec: 1e9 / float64(v)}
		}
		r.Repetitions = append(r.Repetitions, rep)
	}
	if err := results.Write(folder, r); err != nil {
		t.Fatal(err)
	}
}

// noisyFleet writes nodes × reps: each repetition's p50 lognormal around
// 2 µs (reg) and 800 ns (unreg) with σ of 1.5%, a quiet fleet's; node
// n1's reg is slow× the others'.
func noisyFleet(t *testing.T, seed int64, nodes, reps int, slow float64) string {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	draw := func(base float64) int64 { return int64(math.Round(base * math.Exp(0.015*rng.NormFloat64()))) }
	for i := range nodes {
		n := fleetNode{name: fmt.Sprintf("n%d", i), status: "ok", fw: "22.41.1000", rank: i}
		base := 2000.0
		if i == 1 {
			base *= slow
		}
		for range reps {
			n.reps = append(n.reps, draw(base))
			n.unregReps = append(n.unregReps, draw(800))
		}
		n.p50ns = slices.Sorted(slices.Values(n.reps))[reps/2]
		writeFleetNode(t, dir, n, nil)
	}
	return dir
}

// Known answers of the repetitions' test: 6 nodes × 5 repetitions, one
// node 10% slow in reg, is flagged alone in every seed, by the test (its
// robust score is under 1: the score alone misses it); 20 fleets of equal
// nodes flag none.
func TestFleetRepetitionTest(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		fl, err := LoadFleet(noisyFleet(t, seed, 6, 5, 1.10), FleetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fr := fl.Report
		if !slices.Equal(fr.Flagged, []string{"n1"}) {
			t.Errorf("seed %d: flagged %v, want n1 alone", seed, fr.Flagged)
		}
		for _, n := range fr.Nodes {
			if n.Node != "n1" {
				continue
			}
			if s := n.Scores["reg p50"]; math.Abs(s) > fr.Threshold {
				t.Errorf("seed %d: robust score %v flags n1 by itself: not the case this test is about", seed, s)
			}
			if tt := n.Tests["reg p50"]; tt.Reps != 5 || tt.OthersReps != 25 || tt.DeltaPct < 5 || tt.PHolm > fr.Alpha {
				t.Errorf("seed %d: n1's reg p50 test %+v, want 5 vs 25 repetitions, ≥ 5%% slower, p_holm ≤ %g", seed, tt, fr.Alpha)
			}
		}
		if fr.Tests != 36 || fr.TestNote != "" {
			t.Errorf("seed %d: %d tests (%q), want 6 nodes × 2 kinds × 3 metrics and no note", seed, fr.Tests, fr.TestNote)
		}
	}
	for seed := int64(1); seed <= 20; seed++ {
		fl, err := LoadFleet(noisyFleet(t, 100+seed, 6, 5, 1), FleetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(fl.Report.Flagged) != 0 {
			t.Errorf("seed %d: equal nodes, yet flagged %v", seed, fl.Report.Flagged)
		}
	}
	// The minimum effect decides with significance: at 15% the slow node
	// is significant and yet not flagged.
	eff := 15.0
	fl, err := LoadFleet(noisyFleet(t, 1, 6, 5, 1.10), FleetOptions{MinEffect: &eff})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Report.Flagged) != 0 {
		t.Errorf("--min-effect 15%%: flagged %v", fl.Report.Flagged)
	}
	// Three repetitions cannot reach alpha after Holm on 6 nodes
	// (2/C(18,3)·36 > 0.05): said. On 64 they can, the test being exact
	// for 3 against 189 repetitions (2/C(192,3)·384 = 6.5·10⁻⁴), and the
	// slow node is found.
	fl, err = LoadFleet(noisyFleet(t, 1, 6, 3, 1.10), FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fl.Report.TestNote, "too few repetitions") || len(fl.Report.Flagged) != 0 {
		t.Errorf("6 nodes × 3 repetitions: note %q, flagged %v", fl.Report.TestNote, fl.Report.Flagged)
	}
	fl, err = LoadFleet(noisyFleet(t, 1, 64, 3, 1.10), FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fl.Report.TestNote != "" || !slices.Equal(fl.Report.Flagged, []string{"n1"}) {
		t.Errorf("64 nodes × 3 repetitions: note %q, flagged %v, want n1 alone and no note", fl.Report.TestNote, fl.Report.Flagged)
	}
}

// A fleet of two firmware versions with one slow node among its peers, a partial node
// (scored: what it measured is real), a failed one, one whose result is
// damaged and one that never wrote a folder.
func TestFleetReport(t *testing.T) {
	dir := t.TempDir()
	list := []string{"c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08"}
	nodes := []fleetNode{
		{name: "c01", status: "ok", fw: "22.41.1000", rank: 0, p50ns: 2000},
		{name: "c02", status: "ok", fw: "22.41.1000", rank: 1, p50ns: 2100},
		{name: "c03", status: "ok", fw: "22.41.1000", rank: 2, p50ns: 9000}, // the odd one out
		{name: "c04", status: "ok", fw: "22.41.1000", rank: 3, p50ns: 1950},
		{name: "c05", status: "partial", fw: "22.41.1000", rank: 4, p50ns: 2050},
		// Alone on its firmware: nodes are judged against their firmware's.
		{name: "c06", status: "failed", fw: "22.39.2048", rank: 5},
		{name: "c07", garbage: true},
	}
	for _, n := range nodes {
		writeFleetNode(t, dir, n, list)
	}
	// Not nodes: the barrier's folder and a run's temporary sibling.
	os.MkdirAll(filepath.Join(dir, ".fleet-sync-4711"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".c08.tmp-x"), 0o755)

	fr, files, err := GenerateFleet(dir, "", FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, FleetJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "fleet.json", js)
	if !slices.Equal(fr.Flagged, []string{"c03"}) {
		t.Errorf("flagged %v, want exactly c03", fr.Flagged)
	}
	if !slices.Equal(fr.Missing, []string{"c08"}) || !slices.Equal(fr.Failed, []string{"c06", "c07"}) {
		t.Errorf("missing %v, failed %v", fr.Missing, fr.Failed)
	}
	if len(fr.Firmware) != 2 {
		t.Errorf("firmware groups %+v, want 2", fr.Firmware)
	}
	html, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Firmware 22.39.2048", "Firmware 22.41.1000", `id="fleet-heatmap"`, `id="fleet-reg-histogram"`,
		"c08: in the job, no run folder", "c06: failed: worker 1 died", "c07: unreadable", `<tr class="flagged"><td>c03</td>`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("fleet.html lacks %q", want)
		}
	}
	if strings.Count(string(html), `class="flagged"`) != 1 {
		t.Error("fleet.html flags more than one row")
	}
}

// Nodes that agree are not flagged, however small their spread: the MAD
// floor keeps noise of a few percent from counting.
func TestFleetNoOutlier(t *testing.T) {
	dir := t.TempDir()
	for i, p := range []int64{2000, 2010, 1990, 2200, 1900} {
		writeFleetNode(t, dir, fleetNode{name: string(rune('a' + i)), status: "ok", fw: "1", rank: i, p50ns: p}, nil)
	}
	fl, err := LoadFleet(dir, FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Report.Flagged) != 0 {
		t.Errorf("flagged %v in a fleet within 10%%", fl.Report.Flagged)
	}
	if len(fl.Report.Firmware) != 0 {
		t.Errorf("one firmware, yet groups %+v", fl.Report.Firmware)
	}
	// A threshold below the scores flags them: the threshold is what decides.
	fl, err = LoadFleet(dir, FleetOptions{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Report.Flagged) == 0 {
		t.Error("threshold 0.5 flags nobody")
	}
}

func TestFleetBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadFleet(filepath.Join(dir, "nope"), FleetOptions{}); err == nil || !strings.Contains(err.Error(), "no such fleet folder") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := LoadFleet(dir, FleetOptions{}); err == nil || !strings.Contains(err.Error(), "not a fleet folder") {
		t.Errorf("empty folder: %v", err)
	}
}

// Two folders claiming one node (a copied folder, two nodes run under one
// name) are refused, naming the node and both folders: which measured it?
func TestFleetNodeClaimedTwice(t *testing.T) {
	dir := t.TempDir()
	nodes := []string{"n1", "n2"}
	writeFleetNode(t, dir, fleetNode{name: "n1", status: results.StatusOK, fw: "22.1", p50ns: 1000}, nodes)
	writeFleetNode(t, dir, fleetNode{name: "n2", status: results.StatusOK, fw: "22.1", rank: 1, p50ns: 1000}, nodes)
	if err := os.CopyFS(filepath.Join(dir, "n1-copy"), os.DirFS(filepath.Join(dir, "n1"))); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFleet(dir, FleetOptions{})
	if !errors.Is(err, results.ErrInput) {
		t.Fatalf("LoadFleet: %v, want an input error", err)
	}
	for _, want := range []string{"node n1 ", filepath.Join(dir, "n1") + " and", filepath.Join(dir, "n1-copy")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestFleetDetectableEffect is the simulation behind the table of
// detectable effects in README and docs/measurements/2026-12-04-history-fleet.md: for nodes × reps, the
// smallest slowdown of one node's reg (in 0.5% steps from the 5% minimum
// effect) that the fleet flags in at least 95% of 200 fleets, each
// repetition's p50 lognormal with σ 1.5% and HDR-quantized. Minutes of CPU: run it with
// XRCBENCH_FLEET_POWER=1.
func TestFleetDetectableEffect(t *testing.T) {
	if os.Getenv("XRCBENCH_FLEET_POWER") == "" {
		t.Skip("XRCBENCH_FLEET_POWER=1 runs the power simulation")
	}
	const trials, sigma = 200, 0.015
	rng := rand.New(rand.NewPCG(1, 2))
	flagged := func(nodes, reps int, slow float64) bool {
		fr := &FleetReport{Threshold: DefaultOutlierThreshold, Alpha: report.DefaultAlpha, MinEffectPct: DefaultFleetMinEffect, Kinds: []string{results.OpReg, results.OpUnreg}}
		for i := range nodes {
			n := FleetNode{Node: fmt.Sprint(i), Ops: map[string]FleetOp{}, reps: map[string][]float64{}}
			for _, kind := range fr.Kinds {
				base := 2000.0
				if kind == results.OpReg && i == 0 {
					base *= slow
				}
				var p50s []float64
				for range reps {
					v := base * math.Exp(sigma*rng.NormFloat64())
					p50s = append(p50s, v)
					// Percentiles as a run reports them: values of an
					// HDR histogram, quantized, so equal values tie.
					n.reps[kind+" p50"] = append(n.reps[kind+" p50"], hdrValue(v))
					n.reps[kind+" p99"] = append(n.reps[kind+" p99"], hdrValue(3*v))
					n.reps[kind+" ops/s"] = append(n.reps[kind+" ops/s"], 1e9/v)
				}
				m := stats.Median(p50s)
				n.Ops[kind] = FleetOp{P50: int64(m), P99: int64(3 * m), OpsPerSec: 1e9 / m}
			}
			fr.Nodes = append(fr.Nodes, n)
		}
		(&Fleet{Report: fr}).score()
		return slices.Contains(fr.Flagged, "0")
	}
	// XRCBENCH_FLEET_POWER=1 runs every row; a list such as 16x10,64x3
	// runs those alone (a row of 64 nodes takes many minutes).
	only := map[string]bool{}
	if v := os.Getenv("XRCBENCH_FLEET_POWER"); v != "1" {
		for _, row := range strings.Split(v, ",") {
			only[strings.TrimSpace(row)] = true
		}
	}
	for _, nodes := range []int{3, 6, 16, 64} {
		for _, reps := range []int{3, 5, 10} {
			if len(only) > 0 && !only[fmt.Sprintf("%dx%d", nodes, reps)] {
				continue
			}
			found := "none up to 30% (the test's floor)"
			for eff := 5.0; eff <= 30; eff += 0.5 {
				hits := 0
				for range trials {
					if flagged(nodes, reps, 1+eff/100) {
						hits++
					}
				}
				if hits*100 >= 95*trials {
					found = fmt.Sprintf("%.1f%%", eff)
					break
				}
			}
			t.Logf("%3d nodes × %2d repetitions: %s", nodes, reps, found)
		}
	}
}

// hdrValue is v as a run's result reports a percentile: the value of
// HDR's bucket that holds it (3 significant digits).
func hdrValue(v float64) float64 {
	// The highest value of v's bucket, what a histogram holding v alone
	// gives at any percentile: 3 significant digits are 2048 sub-buckets,
	// exact below 2048, then buckets twice as wide each octave. Computed,
	// as a new histogram per value (a 100 s range) made the simulation
	// crawl; TestHDRValue holds it to the library.
	x, w := int64(v), int64(1)
	for x >= 2048*w {
		w *= 2
	}
	return float64(x&^(w-1) + w - 1)
}

// TestHDRValue: hdrValue is what a run's result reports for a value
// recorded alone.
func TestHDRValue(t *testing.T) {
	for _, v := range []float64{1, 70, 999, 2000, 2047, 2049, 4099, 123456, 9.87e6} {
		h := results.NewHistogram()
		if err := h.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
		if want := float64(results.ValueAtPercentile(h, 50)); hdrValue(v) != want {
			t.Errorf("hdrValue(%g) = %g, want the reported p50 %g", v, hdrValue(v), want)
		}
	}
}
