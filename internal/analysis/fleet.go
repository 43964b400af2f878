package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// A fleet folder holds one run folder per node (run --fleet writes
// <out>/<node>/). The fleet report sets the nodes side by side and flags
// those that depart from the rest.
const (
	FleetHTMLFile = "fleet.html"
	FleetJSONFile = "fleet.json"
	FleetSchema   = "xrcbench.fleet/v1"
)

// Robust score of a node in one metric: how far its value lies from the
// fleet's median, in units of the fleet's spread, on a log scale (latency
// and throughput vary by factors, not by sums):
//
//	score = 0.6745 · (ln x − median ln x) / max(MAD ln x, ln 1.1)
//
// MAD is the median absolute deviation across nodes; 0.6745·/MAD makes it
// comparable to a z-score for normal data (Iglewicz and Hoaglin's modified
// z-score), and a node is flagged beyond DefaultOutlierThreshold. The floor
// of ln 1.1 keeps a fleet whose nodes agree to a few percent from flagging
// noise: with it, a node must differ from the median by at least
// e^(3.5·0.1/0.6745) ≈ 1.64× to be flagged, more where the fleet spreads.
const (
	DefaultOutlierThreshold = 3.5
	madFloor                = 0.09531017980432493 // ln 1.1
	madToSigma              = 0.6745
)

// The robust score is blind to a firmware-sized defect (a node 10% slow
// in a fleet that agrees to 1% scores under 1), so each node is also
// tested on its repetitions: the Mann-Whitney U test of the node's
// per-repetition values against the pooled repetitions of the other
// nodes of its firmware, Holm-adjusted across every node, op kind and
// metric of the fleet. A node is flagged when the adjusted p is at most
// report.DefaultAlpha and its median departs from the others' by at least the
// minimum effect: significance alone would flag a 0.5% difference in a
// fleet quiet enough to resolve it, which no one would act on.
const DefaultFleetMinEffect = 5.0 // percent

// Metrics of each op kind the fleet report compares, with the Metric
// that reads them per repetition. max is one sample, at the mercy of one
// interruption: shown, never scored.
var fleetMetrics = []string{"p50", "p99", "ops/s"}

var fleetMetricName = map[string]string{"p50": "p50", "p99": "p99", "ops/s": "ops_per_sec"}

// FleetReport is fleet.json.
type FleetReport struct {
	Schema    string  `json:"schema"`
	Threshold float64 `json:"threshold"` // |score| above which a node is flagged
	// Alpha and MinEffectPct decide the repetitions' test: a node is
	// flagged when its Holm-adjusted p is at most Alpha and its median is
	// at least MinEffectPct off the others'.
	Alpha        float64 `json:"alpha"`
	MinEffectPct float64 `json:"min_effect_pct"`
	// Tests is how many node tests Holm adjusted over; TestNote says why
	// they cannot flag anyone when the repetitions are too few.
	Tests    int         `json:"tests"`
	TestNote string      `json:"test_note,omitempty"`
	Jobs     []string    `json:"jobs,omitempty"`
	Nodes    []FleetNode `json:"nodes"`
	// Missing lists the nodes the job had (result.json's fleet node_list)
	// that left no run folder.
	Missing []string `json:"missing,omitempty"`
	// Unnamed counts the nodes the job had beyond those seen and named.
	Unnamed int `json:"unnamed_missing,omitempty"`
	// Failed lists the nodes whose run failed or could not be read.
	Failed []string `json:"failed,omitempty"`
	// Flagged lists the nodes with at least one outlier.
	Flagged []string `json:"flagged"`
	// Metrics are the fleet's median and MAD (of ln) per scored metric.
	Metrics []FleetMetric `json:"metrics"`
	// Firmware groups the nodes by fw_ver when they have several.
	Firmware []FleetGroup `json:"firmware_groups,omitempty"`
	// Merged is the fleet-wide latency distribution per op kind: every
	// node's histogram merged.
	Merged map[string]FleetMerged `json:"merged"`
	Kinds  []string               `json:"kinds"`
}

// FleetNode is one node's row.
type FleetNode struct {
	Node   string             `json:"node"`
	Folder string             `json:"folder"`
	Rank   *int               `json:"rank,omitempty"`
	JobID  string             `json:"job_id,omitempty"`
	Status string             `json:"status"` // ok, partial, failed, unreadable
	Error  string             `json:"error,omitempty"`
	Device string             `json:"device,omitempty"`
	FWVer  string             `json:"fw_ver,omitempty"`
	Driver string             `json:"driver,omitempty"`
	Kernel string             `json:"kernel,omitempty"`
	Ops    map[string]FleetOp `json:"ops,omitempty"`
	Scores map[string]float64 `json:"scores,omitempty"` // "kind metric" -> score
	// Tests are the node's repetitions against the other nodes' of its
	// firmware, per "kind metric".
	Tests    map[string]FleetTest `json:"tests,omitempty"`
	Outliers []string             `json:"outliers,omitempty"`
	// ClockOffsetNS is the node's clock offset to the shared folder's, as
	// estimated at the barrier (run --fleet-sync).
	ClockOffsetNS *int64 `json:"clock_offset_ns,omitempty"`

	reps map[string][]float64 // per-repetition values per "kind metric"
}

// FleetOp is one op kind on one node.
type FleetOp struct {
	Count     int64   `json:"count"`
	P50       int64   `json:"p50_ns"`
	P99       int64   `json:"p99_ns"`
	Max       int64   `json:"max_ns"`
	OpsPerSec float64 `json:"ops_per_sec"`
}

// FleetTest is one node's U test in one metric.
type FleetTest struct {
	Reps       int     `json:"reps"`
	OthersReps int     `json:"others_reps"`
	DeltaPct   float64 `json:"delta_pct"` // node's median over the others' pooled median, −1
	P          float64 `json:"p"`
	PHolm      float64 `json:"p_holm"`
}

// FleetMetric is the centre and spread of one firmware group's nodes in
// one metric.
type FleetMetric struct {
	FWVer  string  `json:"fw_ver,omitempty"`
	Kind   string  `json:"kind"`
	Metric string  `json:"metric"`
	Nodes  int     `json:"nodes"`
	Median float64 `json:"median"`
	MADLn  float64 `json:"mad_ln"` // MAD of ln values, before the floor
}

// FleetGroup is the nodes of one firmware version.
type FleetGroup struct {
	FWVer string   `json:"fw_ver"`
	Nodes []string `json:"nodes"`
}

// FleetMerged is the fleet-wide distribution of one op kind.
type FleetMerged struct {
	Count int64 `json:"count"`
	P50   int64 `json:"p50_ns"`
	P99   int64 `json:"p99_ns"`
	P999  int64 `json:"p999_ns"`
	Max   int64 `json:"max_ns"`
	Nodes int   `json:"nodes"`
}

// FleetOptions tune the fleet report.
type FleetOptions struct {
	Threshold float64 // 0: DefaultOutlierThreshold
	// MinEffect is the smallest difference, in percent, the repetitions'
	// test flags; nil: DefaultFleetMinEffect.
	MinEffect *float64
	Counts    report.CountScale
}

// Fleet is a fleet read and scored, with the merged histograms.
type Fleet struct {
	Report *FleetReport
	Hists  map[string]*hdrhistogram.Histogram

	workloads  []string // the nodes' workloads and providers, for the pictures' stamp
	testDouble bool     // some node measured through the libibverbs test double
}

// LoadFleet reads a fleet folder: each sub-folder that is not hidden is a
// node's run folder. A node whose result.json is missing or damaged is
// listed as unreadable, not an error: a fleet is reportable with failed
// nodes. A folder with no node at all is bad input.
func LoadFleet(dir string, opts FleetOptions) (*Fleet, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, results.InputErrorf("%s: no such fleet folder", dir)
	case err != nil:
		return nil, results.InputError(err)
	case !st.IsDir():
		return nil, results.InputErrorf("%s: not a folder (give the folder run --fleet --out wrote, one folder per node)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, results.InputError(err)
	}
	thr := opts.Threshold
	if thr <= 0 {
		thr = DefaultOutlierThreshold
	}
	eff := DefaultFleetMinEffect
	if opts.MinEffect != nil {
		eff = *opts.MinEffect
	}
	fr := &FleetReport{Schema: FleetSchema, Threshold: thr, Alpha: report.DefaultAlpha, MinEffectPct: eff, Flagged: []string{}, Merged: map[string]FleetMerged{}}
	fl := &Fleet{Report: fr, Hists: map[string]*hdrhistogram.Histogram{}}
	listed := map[string]bool{}
	claimed := map[string]string{} // node → the folder that holds it
	jobs := map[string]bool{}
	mostNodes := 0
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		node, listedHere := loadFleetNode(filepath.Join(dir, e.Name()), fl)
		if node == nil {
			continue
		}
		if err := claimNode(claimed, dir, node); err != nil {
			return nil, err
		}
		fr.Nodes = append(fr.Nodes, *node)
		for _, n := range listedHere.NodeList {
			listed[n] = true
		}
		if listedHere.JobID != "" {
			jobs[listedHere.JobID] = true
		}
		mostNodes = max(mostNodes, listedHere.Nodes)
	}
	if len(fr.Nodes) == 0 {
		return nil, results.InputErrorf("%s: no node folder with a %s: not a fleet folder (run --fleet --out writes one folder per node)", dir, results.FileName)
	}
	fr.Jobs = slices.Sorted(func(yield func(string) bool) {
		for j := range jobs {
			if !yield(j) {
				return
			}
		}
	})
	seen := map[string]bool{}
	for _, n := range fr.Nodes {
		seen[n.Node] = true
		if n.Status == results.StatusFailed || n.Status == "unreadable" {
			fr.Failed = append(fr.Failed, n.Node)
		}
	}
	for n := range listed {
		if !seen[n] {
			fr.Missing = append(fr.Missing, n)
		}
	}
	sort.Strings(fr.Missing)
	if extra := mostNodes - len(fr.Nodes) - len(fr.Missing); extra > 0 {
		fr.Unnamed = extra
	}
	fl.score()
	fl.groupFirmware()
	for _, kind := range fr.Kinds {
		h := fl.Hists[kind]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		v := results.ValuesAtPercentiles(h, 50, 99, 99.9)
		m := fr.Merged[kind]
		m.Count, m.P50, m.P99, m.P999, m.Max = h.TotalCount(), v[0], v[1], v[2], h.Max()
		fr.Merged[kind] = m
	}
	return fl, nil
}

// loadFleetNode reads one node's folder; nil when it holds nothing of a
// run at all (a stray folder).
func loadFleetNode(dir string, fl *Fleet) (*FleetNode, results.Fleet) {
	fr := fl.Report
	n := &FleetNode{Node: filepath.Base(dir), Folder: filepath.Base(dir)}
	r, err := results.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// A node that died before writing anything leaves no folder (the
		// run writes into a hidden sibling); an empty one is not a node.
		if ents, _ := os.ReadDir(dir); len(ents) == 0 {
			return nil, results.Fleet{}
		}
		n.Status, n.Error = "unreadable", "no "+results.FileName
		return n, results.Fleet{}
	}
	if err != nil {
		// Named from the fleet folder: the report moves with it.
		n.Status, n.Error = "unreadable", strings.ReplaceAll(oneLineErr(err), filepath.Dir(dir)+string(filepath.Separator), "")
		return n, results.Fleet{}
	}
	n.Status, n.Error = r.Status, r.Error
	fl.testDouble = fl.testDouble || report.IsTestDouble(r)
	if w := r.Config.Workload + " on " + r.Config.Provider; !slices.Contains(fl.workloads, w) {
		fl.workloads = append(fl.workloads, w)
	}
	var id results.Fleet
	if r.Fleet != nil {
		id = *r.Fleet
		n.Node, n.JobID = r.Fleet.Node, r.Fleet.JobID
		rank := r.Fleet.Rank
		n.Rank = &rank
		if s := r.Fleet.Sync; s != nil {
			off := s.ClockOffsetNS
			n.ClockOffsetNS = &off
		}
	}
	if d := r.Environment.Device; d != nil {
		n.Device, n.FWVer, n.Driver = d.Name, d.FWVer, d.Driver
	}
	n.Kernel = r.Environment.Kernel
	if r.Status == results.StatusFailed {
		return n, id
	}
	n.Ops = map[string]FleetOp{}
	for _, kind := range results.KindsOf(r) {
		s := r.Ops[kind]
		if s.Count == 0 {
			continue
		}
		n.Ops[kind] = FleetOp{Count: s.Count, P50: s.NS.P50, P99: s.NS.P99, Max: s.NS.Max, OpsPerSec: s.OpsPerSec}
		for _, metric := range fleetMetrics {
			m, _ := report.MetricByName(fleetMetricName[metric])
			if v := report.RepetitionStats(r, kind, m).Values; len(v) > 0 {
				if n.reps == nil {
					n.reps = map[string][]float64{}
				}
				n.reps[kind+" "+metric] = v
			}
		}
		if !slices.Contains(fr.Kinds, kind) {
			fr.Kinds = append(fr.Kinds, kind)
		}
		if enc, ok := r.Histograms[kind]; ok {
			h, err := results.DecodeHistogram(enc)
			if err != nil {
				n.Status, n.Error, n.Ops = "unreadable", fmt.Sprintf("histograms.%s: %v", kind, err), nil
				return n, id
			}
			if fl.Hists[kind] == nil {
				fl.Hists[kind] = results.NewHistogram()
			}
			fl.Hists[kind].Merge(h)
			m := fr.Merged[kind]
			m.Nodes++
			fr.Merged[kind] = m
		}
	}
	slices.SortFunc(fr.Kinds, func(a, b string) int { return slices.Index(results.OpKinds, a) - slices.Index(results.OpKinds, b) })
	return n, id
}

func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func metricValue(op FleetOp, metric string) float64 {
	switch metric {
	case "p50":
		return float64(op.P50)
	case "p99":
		return float64(op.P99)
	case "ops/s":
		return op.OpsPerSec
	}
	return float64(op.Max)
}

// score scores and tests every node in every metric against the nodes of
// its firmware that measured it (ok and partial): a firmware version is a
// known difference, and a node is judged against its peers. Fewer than
// three nodes have no majority to depart from: no robust score; a node
// with no peer at all is not tested.
func (fl *Fleet) score() {
	fr := fl.Report
	var fws []string
	for _, n := range fr.Nodes {
		if n.Ops != nil && !slices.Contains(fws, n.FWVer) {
			fws = append(fws, n.FWVer)
		}
	}
	sort.Strings(fws)
	type test struct {
		node int
		key  string
	}
	var tests []test
	var ps []float64
	minP := 1.0
	for _, fw := range fws {
		for _, kind := range fr.Kinds {
			for _, metric := range fleetMetrics {
				key := kind + " " + metric
				var idx []int
				for i, n := range fr.Nodes {
					op, ok := n.Ops[kind]
					if v := metricValue(op, metric); ok && v > 0 && n.FWVer == fw {
						idx = append(idx, i)
					}
				}
				fl.robustScore(fw, kind, metric, idx)
				for _, i := range idx {
					mine := fr.Nodes[i].reps[key]
					var others []float64
					for _, j := range idx {
						if j != i {
							others = append(others, fr.Nodes[j].reps[key]...)
						}
					}
					if t, ok := uTest(mine, others); ok {
						n := &fr.Nodes[i]
						if n.Tests == nil {
							n.Tests = map[string]FleetTest{}
						}
						tests = append(tests, test{i, key})
						ps = append(ps, t.P)
						t.P = roundSig(t.P)
						n.Tests[key] = t
						minP = math.Min(minP, stats.SeparatedP(len(mine), len(others)))
					}
				}
			}
		}
	}
	fr.Tests = len(tests)
	if len(tests) > 0 && minP*float64(len(tests)) > fr.Alpha {
		fr.TestNote = fmt.Sprintf("too few repetitions for the test to flag a node: the smallest p they allow, %.2g, is above %g after Holm over %d tests; the robust score alone decides", minP, fr.Alpha, len(tests))
	}
	for k, adj := range stats.HolmAdjust(ps) {
		n := &fr.Nodes[tests[k].node]
		t := n.Tests[tests[k].key]
		t.PHolm = roundSig(adj)
		n.Tests[tests[k].key] = t
		if adj <= fr.Alpha && math.Abs(t.DeltaPct) >= fr.MinEffectPct {
			n.Outliers = append(n.Outliers, fmt.Sprintf("%s %+.1f%% (p=%.2g)", tests[k].key, t.DeltaPct, adj))
		}
	}
	for _, n := range fr.Nodes {
		if len(n.Outliers) > 0 {
			fr.Flagged = append(fr.Flagged, n.Node)
		}
	}
}

// robustScore scores the nodes idx of firmware fw in one metric.
func (fl *Fleet) robustScore(fw, kind, metric string, idx []int) {
	fr := fl.Report
	if len(idx) < 3 {
		return
	}
	lns := make([]float64, len(idx))
	for j, i := range idx {
		lns[j] = math.Log(metricValue(fr.Nodes[i].Ops[kind], metric))
	}
	med, mad := stats.Median(lns), stats.MAD(lns)
	fr.Metrics = append(fr.Metrics, FleetMetric{FWVer: fw, Kind: kind, Metric: metric, Nodes: len(idx), Median: units.Round3(math.Exp(med)), MADLn: units.Round3(mad)})
	for j, i := range idx {
		s := units.Round3(madToSigma * (lns[j] - med) / math.Max(mad, madFloor))
		n := &fr.Nodes[i]
		if n.Scores == nil {
			n.Scores = map[string]float64{}
		}
		n.Scores[kind+" "+metric] = s
		if math.Abs(s) > fr.Threshold {
			n.Outliers = append(n.Outliers, fmt.Sprintf("%s %s %+.1f", kind, metric, s))
		}
	}
}

// uTest tests a node's repetitions against the others' pooled ones; no
// test when a side has none.
func uTest(mine, others []float64) (FleetTest, bool) {
	if len(mine) == 0 || len(others) == 0 {
		return FleetTest{}, false
	}
	t := FleetTest{Reps: len(mine), OthersReps: len(others), P: stats.UTest(mine, others)}
	if mb := stats.Median(others); mb != 0 {
		t.DeltaPct = units.Round3((stats.Median(mine)/mb - 1) * 100)
	}
	return t, true
}

// roundSig keeps a p-value's three significant digits: fleet.json stays
// readable and stable.
func roundSig(p float64) float64 {
	if p == 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(p))-2)
	return math.Round(p/e) * e
}

// groupFirmware sorts the nodes by firmware, then name, and lists the
// groups when there are several versions.
func (fl *Fleet) groupFirmware() {
	fr := fl.Report
	sort.SliceStable(fr.Nodes, func(i, j int) bool {
		a, b := fr.Nodes[i], fr.Nodes[j]
		if ua, ub := a.Status == "unreadable", b.Status == "unreadable"; ua != ub {
			return ub // what could not be read comes last
		}
		if a.FWVer != b.FWVer {
			return a.FWVer < b.FWVer
		}
		return a.Node < b.Node
	})
	var groups []FleetGroup
	for _, n := range fr.Nodes {
		if n.Status == "unreadable" {
			continue
		}
		if len(groups) == 0 || groups[len(groups)-1].FWVer != n.FWVer {
			groups = append(groups, FleetGroup{FWVer: n.FWVer})
		}
		g := &groups[len(groups)-1]
		g.Nodes = append(g.Nodes, n.Node)
	}
	if len(groups) > 1 {
		fr.Firmware = groups
	}
	sort.Strings(fr.Flagged)
	sort.Strings(fr.Failed)
}

// WriteJSON writes fleet.json.
func (fr *FleetReport) WriteJSON() ([]byte, error) {
	b, err := json.MarshalIndent(fr, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// stamp is the fleet's pictures' stamp: what the nodes ran, how many,
// their devices and firmware.
func (fl *Fleet) stamp() report.Stamp {
	var devs []string
	for _, n := range fl.Report.Nodes {
		d := n.Device
		if n.FWVer != "" {
			d += " fw " + n.FWVer
		}
		if d != "" && !slices.Contains(devs, d) {
			devs = append(devs, d)
		}
	}
	line := "fleet of " + units.Plural(len(fl.Report.Nodes), "node") + ": " + strings.Join(fl.workloads, "; ")
	if len(devs) > 0 {
		line += " · " + strings.Join(devs, ", ")
	}
	return report.Stamp{Line: line, TestDouble: fl.testDouble}
}

// FleetFigures are the heatmap and one merged histogram per op kind.
func (fl *Fleet) FleetFigures(scale report.CountScale) ([]report.Figure, error) {
	var figs []report.Figure
	if f, ok, err := fl.heatmap(); err != nil {
		return nil, err
	} else if ok {
		figs = append(figs, f)
	}
	for _, kind := range fl.Report.Kinds {
		h := fl.Hists[kind]
		if h == nil {
			continue
		}
		f, err := report.LatencyHistogram("fleet-"+results.SafeFileName(kind)+"-histogram", kind, h, scale, fl.stamp())
		if err != nil {
			return nil, err
		}
		f.Title = kind + ": fleet-wide latency histogram"
		f.Caption = fmt.Sprintf("Every node's %s latencies merged (%s). ", kind, units.Plural(fl.Report.Merged[kind].Nodes, "node")) + f.Caption
		figs = append(figs, f)
	}
	return figs, nil
}

// heatmap draws nodes × metrics coloured by score: blue below the fleet,
// red above, white where it agrees; scores are clamped at twice the
// threshold so one wild node does not wash out the rest.
func (fl *Fleet) heatmap() (report.Figure, bool, error) {
	fr := fl.Report
	var cols []string
	for _, m := range fr.Metrics {
		cols = append(cols, m.Kind+" "+m.Metric)
	}
	var rows []int
	for i, n := range fr.Nodes {
		if len(n.Scores) > 0 {
			rows = append(rows, i)
		}
	}
	if len(cols) == 0 || len(rows) == 0 {
		return report.Figure{}, false, nil
	}
	lim := 2 * fr.Threshold
	g := scoreGrid{cols: len(cols), rows: len(rows), z: func(c, r int) float64 {
		s, ok := fr.Nodes[rows[len(rows)-1-r]].Scores[cols[c]]
		if !ok {
			return math.NaN()
		}
		return math.Max(-lim, math.Min(lim, s))
	}}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(-lim)
	pal.SetMax(lim)
	hm := plotter.NewHeatMap(g, pal.Palette(64))
	hm.Min, hm.Max = -lim, lim
	hm.NaN = colorNaN
	title := "Nodes × metrics: robust score"
	p := plot.New()
	p.Title.Text = title
	p.Add(hm)
	var xt, yt []plot.Tick
	for c, name := range cols {
		xt = append(xt, plot.Tick{Value: float64(c), Label: name})
	}
	for r := range rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: fr.Nodes[rows[len(rows)-1-r]].Node})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	caption := fmt.Sprintf("Each cell is a node's robust score in a metric: 0.6745·(ln value − fleet median)/MAD of ln values (MAD at least ln 1.1); red above the fleet, blue below, clamped at ±%.1f; a node is flagged beyond ±%.1f. Grey: not measured.", lim, fr.Threshold)
	h := report.PlotH
	if need := vg.Points(float64(18*len(rows) + 120)); need > h {
		h = need
	}
	f, err := report.RenderSized(p, "fleet-heatmap", title, caption, report.PlotW, h)
	return f, true, err
}

type scoreGrid struct {
	cols, rows int
	z          func(c, r int) float64
}

func (g scoreGrid) Dims() (int, int)   { return g.cols, g.rows }
func (g scoreGrid) Z(c, r int) float64 { return g.z(c, r) }
func (g scoreGrid) X(c int) float64    { return float64(c) }
func (g scoreGrid) Y(r int) float64    { return float64(r) }

var fleetPage = template.Must(template.New("fleet").Funcs(report.TemplateFuncs).Parse(report.FigureTemplate + report.PageHead("80em") + `tr.flagged td { background: #fde8ea; } td.out { font-weight: bold; color: #b00020; }
.status-ok { color: #17612b; } .status-partial { color: #a35b00; } .status-failed, .status-unreadable { color: #b00020; }
.warnings { background: #fff4e5; border-left: 4px solid #e69500; padding: .5em 1em; }
figure { margin: 1.5em 0; } figure svg { width: 100%; max-width: 56em; height: auto; display: block; overflow: visible; }
figcaption { color: #555; font-size: .9em; }
#headline { background: #f4f8fc; border-left: 4px solid #4682b4; padding: .2em 1em .5em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<section id="headline">
<ul>{{range .Headline}}<li>{{.}}</li>{{end}}</ul>
</section>
{{if or .R.Missing .R.Failed .R.Unnamed}}<div class="warnings" id="missing"><b>Missing or failed nodes</b><ul>
{{range .R.Missing}}<li>{{.}}: in the job, no run folder</li>{{end}}
{{if .R.Unnamed}}<li>{{plural .R.Unnamed "more node"}} in the job wrote nothing (the launcher did not list the names)</li>{{end}}
{{range .FailedRows}}<li>{{.Node}}: {{.Status}}{{with .Error}}: {{.}}{{end}}</li>{{end}}
</ul></div>{{end}}
{{range .Groups}}
<section>
<h2>{{.Heading}}</h2>
<table>
<tr><th>node</th><th>rank</th><th>device</th><th>fw_ver</th><th>driver</th><th>kernel</th><th>status</th>{{range $.R.Kinds}}<th>{{.}} p50</th><th>{{.}} p99</th><th>{{.}} max</th><th>{{.}} ops/s</th>{{end}}<th>outliers (score)</th></tr>
{{range .Rows}}<tr{{if .Outliers}} class="flagged"{{end}}><td>{{.Node}}</td><td class="n">{{.Rank}}</td><td>{{.Device}}</td><td>{{.FWVer}}</td><td>{{.Driver}}</td><td>{{.Kernel}}</td><td class="status-{{.Status}}">{{.Status}}</td>{{range .Cells}}<td class="n{{if .Out}} out{{end}}">{{.Text}}</td>{{end}}<td>{{join .Outliers "; "}}</td></tr>
{{end}}</table>
</section>
{{end}}
<p>Fleet median per metric (MAD of ln values): {{join .Medians "; "}}.</p>
<p>A node is flagged when its robust score in a metric (p50, p99 or ops/s of an op kind) passes ±{{.R.Threshold}}: score = 0.6745·(ln value − median of ln values)/MAD of ln values across the nodes that measured it, the MAD at least ln 1.1; max is shown, not scored (one sample). With fewer than three nodes nothing is scored. A node is also flagged when the Mann-Whitney U test of its repetitions against the other nodes' pooled repetitions (Holm-adjusted over {{.R.Tests}} tests) is significant at {{.R.Alpha}} and its median is at least {{.R.MinEffectPct}}% off theirs (outliers shown as ±x% with the adjusted p). Nodes are compared only with nodes of the same firmware.</p>
{{range .Figures}}{{template "figure" .}}
{{end}}
</body>
</html>
`))

type fleetCell struct {
	Text string
	Out  bool
}

type fleetRow struct {
	FleetNode
	Rank  string
	Cells []fleetCell
}

type fleetGroupView struct {
	Heading string
	Rows    []fleetRow
}

// WriteFleetHTML renders fleet.html.
func (fl *Fleet) WriteFleetHTML(title string, figs []report.Figure) ([]byte, error) {
	fr := fl.Report
	var groups []fleetGroupView
	for _, n := range fr.Nodes {
		heading := "Nodes"
		switch {
		case n.Status == "unreadable":
			heading = "Unreadable"
		case len(fr.Firmware) > 0:
			heading = "Firmware " + orUnknown(n.FWVer)
		}
		if len(groups) == 0 || groups[len(groups)-1].Heading != heading {
			groups = append(groups, fleetGroupView{Heading: heading})
		}
		row := fleetRow{FleetNode: n, Rank: "–"}
		if n.Rank != nil {
			row.Rank = fmt.Sprint(*n.Rank)
		}
		for _, kind := range fr.Kinds {
			op, ok := n.Ops[kind]
			for _, m := range []string{"p50", "p99", "max", "ops/s"} {
				c := fleetCell{Text: "–"}
				if ok {
					if m == "ops/s" {
						c.Text = units.FormatRate(op.OpsPerSec)
					} else {
						c.Text = units.FormatNS(metricValue(op, m))
					}
					s, scored := n.Scores[kind+" "+m]
					c.Out = scored && math.Abs(s) > fr.Threshold
				}
				row.Cells = append(row.Cells, c)
			}
		}
		g := &groups[len(groups)-1]
		g.Rows = append(g.Rows, row)
	}
	var failed []FleetNode
	for _, n := range fr.Nodes {
		if slices.Contains(fr.Failed, n.Node) {
			failed = append(failed, n)
		}
	}
	var medians []string
	for _, m := range fr.Metrics {
		v := units.FormatNS(m.Median)
		if m.Metric == "ops/s" {
			v = units.FormatRate(m.Median)
		}
		medians = append(medians, fmt.Sprintf("%s %s %s (%.3f)", m.Kind, m.Metric, v, m.MADLn))
	}
	var figViews []struct {
		Name, Title, Caption string
		Inline               template.HTML
	}
	for _, f := range figs {
		figViews = append(figViews, struct {
			Name, Title, Caption string
			Inline               template.HTML
		}{f.Name, f.Title, f.Caption, report.InlineSVG(f.SVG)})
	}
	var b bytes.Buffer
	err := fleetPage.Execute(&b, map[string]any{
		"Title": title, "R": fr, "Groups": groups,
		"FailedRows": failed, "Medians": medians, "Figures": figViews, "Headline": fr.Headline(),
	})
	return []byte(safetext.Text(b.String())), err
}

// Headline says the fleet in a few lines: nodes by status, and who is
// flagged for what.
func (fr *FleetReport) Headline() []string {
	count := map[string]int{}
	for _, n := range fr.Nodes {
		count[n.Status]++
	}
	var parts []string
	for _, s := range []string{results.StatusOK, results.StatusPartial, results.StatusFailed, "unreadable"} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	if len(fr.Missing)+fr.Unnamed > 0 {
		parts = append(parts, fmt.Sprintf("%d missing", len(fr.Missing)+fr.Unnamed))
	}
	lines := []string{fmt.Sprintf("%s: %s", units.Plural(len(fr.Nodes), "node"), strings.Join(parts, ", "))}
	if len(fr.Firmware) > 0 {
		var g []string
		for _, x := range fr.Firmware {
			g = append(g, fmt.Sprintf("%s on %d", orUnknown(x.FWVer), len(x.Nodes)))
		}
		lines = append(lines, "firmware: "+strings.Join(g, ", "))
	}
	if len(fr.Flagged) == 0 {
		lines = append(lines, fmt.Sprintf("no node departs from the fleet (robust score within ±%g; no difference of %g%% or more significant at %g over %d repetition tests)", fr.Threshold, fr.MinEffectPct, fr.Alpha, fr.Tests))
	}
	if fr.TestNote != "" {
		lines = append(lines, fr.TestNote)
	}
	for _, n := range fr.Nodes {
		if len(n.Outliers) > 0 {
			lines = append(lines, fmt.Sprintf("flagged %s: %s", n.Node, strings.Join(n.Outliers, "; ")))
		}
	}
	return lines
}

func orUnknown(s string) string {
	if s == "" {
		return "fw_ver unknown"
	}
	return s
}

// GenerateFleet reads the fleet folder dir and writes fleet.json and
// fleet.html into out (dir when empty).
func GenerateFleet(dir, out string, opts FleetOptions) (*FleetReport, []string, error) {
	fl, err := LoadFleet(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	if out == "" {
		out = dir
	}
	js, err := fl.Report.WriteJSON()
	if err != nil {
		return nil, nil, err
	}
	figs, err := fl.FleetFigures(opts.Counts)
	if err != nil {
		return nil, nil, err
	}
	title := "Fleet " + filepath.Base(filepath.Clean(dir))
	if len(fl.Report.Jobs) > 0 {
		title += " (job " + strings.Join(fl.Report.Jobs, ", ") + ")"
	}
	page, err := fl.WriteFleetHTML(title, figs)
	if err != nil {
		return nil, nil, err
	}
	// Beneath a handle of the folder, which another user cannot re-point:
	// a fleet's folder is shared, and a folder of another user's, for
	// root, is refused (safedir.ErrRefused).
	od, err := safedir.OpenOut(out, true)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet report folder %w: write it elsewhere (--out)", err)
	}
	defer od.Close()
	files := []string{filepath.Join(out, FleetJSONFile), filepath.Join(out, FleetHTMLFile)}
	if err := od.WriteFile(FleetJSONFile, js, 0o644); err != nil {
		return nil, nil, err
	}
	if err := od.WriteFile(FleetHTMLFile, page, 0o644); err != nil {
		return nil, nil, err
	}
	return fl.Report, files, nil
}

// colorNaN is a heatmap cell with no value.
var colorNaN = color.RGBA{R: 0xcc, G: 0xcc, B: 0xcc, A: 0xff}

// claimNode records that the fleet folder's node folder claims its node,
// and refuses a second folder claiming the same one: which of the two
// measured the node? (A copied folder, or two nodes run with one name.)
func claimNode(claimed map[string]string, dir string, n *FleetNode) error {
	if prev, ok := claimed[n.Node]; ok {
		return results.InputErrorf("node %s is claimed by two folders, %s and %s: keep one", n.Node,
			filepath.Join(dir, prev), filepath.Join(dir, n.Folder))
	}
	claimed[n.Node] = n.Folder
	return nil
}
