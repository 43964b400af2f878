package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

func engineRun(t *testing.T, name string) *Run {
	t.Helper()
	run, err := LoadRun("testdata/runs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestExportGitHubActionBenchmark checks the two files against what
// github-action-benchmark's custom tools read: an array of objects with a
// string name, a string unit, a number value, optional string range and
// extra, and nothing else; names unique; values the medians over
// repetitions.
func TestExportGitHubActionBenchmark(t *testing.T) {
	run := engineRun(t, "engine-lifecycle")
	smaller, bigger, err := ExportGitHubActionBenchmark([]*Run{run}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "export-gab.json", smaller)
	golden.Check(t, "export-gab-throughput.json", bigger)
	for _, tc := range []struct {
		name    string
		data    []byte
		metrics []string
		unit    string
	}{
		{"smaller", smaller, []string{"p50", "p99"}, "ns"},
		{"bigger", bigger, []string{"ops_per_sec"}, "ops/s"},
	} {
		var entries []map[string]any
		if err := json.Unmarshal(tc.data, &entries); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := len(run.Kinds) * len(tc.metrics); len(entries) != want {
			t.Errorf("%s: %d entries, want %d (op kinds × metrics)", tc.name, len(entries), want)
		}
		names := map[string]bool{}
		for _, e := range entries {
			for k, v := range e {
				switch k {
				case "name", "unit", "range", "extra":
					if _, ok := v.(string); !ok {
						t.Errorf("%s: %s is %T, want a string", tc.name, k, v)
					}
				case "value":
					if _, ok := v.(float64); !ok {
						t.Errorf("%s: value is %T, want a number", tc.name, v)
					}
				default:
					t.Errorf("%s: unknown key %q", tc.name, k)
				}
			}
			name, _ := e["name"].(string)
			if names[name] {
				t.Errorf("%s: name %q twice", tc.name, name)
			}
			names[name] = true
			if e["unit"] != tc.unit {
				t.Errorf("%s: %s unit %v, want %s", tc.name, name, e["unit"], tc.unit)
			}
			// lifecycle/KIND [configuration] METRIC
			cut := strings.LastIndex(name, " ")
			bench, metric := name[:max(cut, 0)], name[cut+1:]
			kind, config, _ := strings.Cut(strings.TrimPrefix(bench, "lifecycle/"), " [")
			m, ok := MetricByName(metric)
			if !ok || !strings.HasPrefix(bench, "lifecycle/") || !strings.HasSuffix(config, "]") ||
				!strings.Contains(config, fmt.Sprintf("%dx%d", run.Result.Config.Procs, run.Result.Config.Threads)) {
				t.Fatalf("%s: name %q is not lifecycle/KIND [configuration] METRIC", tc.name, name)
			}
			want := units.Round3(RepetitionStats(run.Result, kind, m).Median)
			if got := e["value"].(float64); got != want {
				t.Errorf("%s: %s value %g, want the median over repetitions %g", tc.name, name, got, want)
			}
			if r, ok := e["range"].(string); !ok || !strings.HasPrefix(r, "± ") {
				t.Errorf("%s: %s range %v: 5 repetitions bound a 90%% interval", tc.name, name, e["range"])
			}
		}
		if tc.name == "smaller" && !names["lifecycle/unreg_last [sim 2x2 4 QPs reset] p99"] {
			t.Errorf("no lifecycle/unreg_last p99 among %v", names)
		}
	}
}

// TestExportBencher checks the output against the Bencher Metric Format's
// JSON schema (benchmark → measure → {value, lower_value, upper_value},
// value required, all numbers) and the bounds against the value.
func TestExportBencher(t *testing.T) {
	run := engineRun(t, "engine-lifecycle")
	data, err := ExportBencher([]*Run{run}, ExportOptions{Metrics: metrics("p50", "p999")})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "export-bencher.json", data)
	var bmf map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &bmf); err != nil {
		t.Fatal(err)
	}
	if len(bmf) != len(run.Kinds) {
		t.Errorf("%d benchmarks, want one per op kind (%d)", len(bmf), len(run.Kinds))
	}
	for bench, measures := range bmf {
		if len(measures) != 3 {
			t.Errorf("%s: measures %v, want latency-p50, latency-p999, throughput", bench, measures)
		}
		for name, m := range measures {
			v, ok := m["value"].(float64)
			if !ok {
				t.Errorf("%s %s: value %v is required and a number", bench, name, m["value"])
			}
			lo, lok := m["lower_value"].(float64)
			hi, hok := m["upper_value"].(float64)
			if !lok || !hok || !(lo <= v && v <= hi) {
				t.Errorf("%s %s: lower %v, value %v, upper %v", bench, name, m["lower_value"], v, m["upper_value"])
			}
			for k := range m {
				if k != "value" && k != "lower_value" && k != "upper_value" {
					t.Errorf("%s %s: unknown key %q", bench, name, k)
				}
			}
		}
	}
	found := false
	for bench, measures := range bmf {
		if strings.HasPrefix(bench, "lifecycle/unreg_last [") {
			_, thr := measures["throughput"]
			_, lat := measures["latency"]
			found = thr && lat
		}
	}
	if !found {
		t.Errorf("no throughput and latency (Bencher's built-in measures) for lifecycle/unreg_last: %v", bmf)
	}
}

// Too few repetitions to bound the median: no bounds rather than
// made-up ones.
func TestExportBoundsNeedRepetitions(t *testing.T) {
	run := runOf("few", map[string][]float64{"reg": {100, 110}})
	data, err := ExportBencher([]*Run{run}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("lower_value")) {
		t.Errorf("bounds from 2 repetitions:\n%s", data)
	}
	smaller, _, err := ExportGitHubActionBenchmark([]*Run{run}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(smaller, []byte(`"range"`)) || !bytes.Contains(smaller, []byte(`"value": 105`)) {
		t.Errorf("2 repetitions: want the median 105 and no range:\n%s", smaller)
	}
}

func TestExportRefuses(t *testing.T) {
	failed := runOf("failed", map[string][]float64{"reg": {100}})
	failed.Result.Status = results.StatusFailed
	a, b := runOf("a", map[string][]float64{"reg": {100}}), runOf("b", map[string][]float64{"reg": {100}})
	for name, runs := range map[string][]*Run{"none": nil, "failed": {failed}, "same workload": {a, b}} {
		if _, err := ExportBencher(runs, ExportOptions{}); !errors.Is(err, results.ErrInput) {
			t.Errorf("%s: bencher: %v, want an input error", name, err)
		}
		if _, _, err := ExportGitHubActionBenchmark(runs, ExportOptions{}); !errors.Is(err, results.ErrInput) {
			t.Errorf("%s: github-action-benchmark: %v, want an input error", name, err)
		}
	}
}

// TestExportCSV reads the CSV back: one row per run, repetition, op kind
// and statistic, every row as wide as the header, the values those of the
// repetitions, the configuration and environment in every row.
func TestExportCSV(t *testing.T) {
	runs := []*Run{engineRun(t, "engine-lifecycle"), loadFixture(t, lifecycleFixture())}
	data, err := ExportCSV(runs)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	want := 0
	for _, run := range runs {
		for _, rep := range run.Result.Repetitions {
			want += len(rep.Ops) * len(csvStatistics())
		}
	}
	if len(recs)-1 != want {
		t.Errorf("%d rows, want %d (runs × repetitions × kinds × statistics)", len(recs)-1, want)
	}
	for _, c := range []string{"run", "repetition", "kind", "statistic", "value", "unit", "workload", "procs", "host", "xrcbench_version", "option:sim_cost"} {
		if _, ok := col[c]; !ok {
			t.Errorf("no column %q in %v", c, head)
		}
	}
	checked := 0
	for _, rec := range recs[1:] {
		if len(rec) != len(head) {
			t.Fatalf("row of %d fields, header of %d", len(rec), len(head))
		}
		if rec[col["statistic"]] != "p99" {
			continue
		}
		for _, run := range runs {
			if rec[col["run"]] != run.Dir {
				continue
			}
			// Counted from 1, as run's warnings and qualify count them.
			n, _ := strconv.Atoi(rec[col["repetition"]])
			i := n - 1
			if i < 0 || i >= len(run.Result.Repetitions) {
				t.Fatalf("repetition %q of %d", rec[col["repetition"]], len(run.Result.Repetitions))
			}
			v, _ := strconv.ParseFloat(rec[col["value"]], 64)
			if want := run.Result.Repetitions[i].Ops[rec[col["kind"]]].NS.P99; math.Abs(v-float64(want)) > 0 {
				t.Errorf("%s rep %d %s p99 %g, want %d", run.Dir, n, rec[col["kind"]], v, want)
			}
			if rec[col["procs"]] != strconv.Itoa(run.Result.Config.Procs) || rec[col["unit"]] != "ns" {
				t.Errorf("row %v: procs or unit wrong", rec)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no p99 row checked")
	}
}

// TestCompareJUnit reads the JUnit back: one case per gated metric, the
// +25% pair's reg p50 failed and nothing else; the A/A pair passes; too
// few repetitions skip rather than pass.
func TestCompareJUnit(t *testing.T) {
	type xcase struct {
		Name    string    `xml:"name,attr"`
		Failure *struct{} `xml:"failure"`
		Skipped *struct{} `xml:"skipped"`
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Cases []xcase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	read := func(base, new *Run) {
		t.Helper()
		c, err := Compare(base, new, costOpts())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteJUnit(&b, c.JUnit(new.Result.Started)); err != nil {
			t.Fatal(err)
		}
		doc.Suites = nil
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(c.Gates) {
			t.Fatalf("want one suite with a case per gate (%d):\n%s", len(c.Gates), b.String())
		}
	}
	base := engineRun(t, "engine-lifecycle")
	read(base, engineRun(t, "engine-lifecycle-reg25"))
	for _, c := range doc.Suites[0].Cases {
		if (c.Failure != nil) != (c.Name == "reg p50") {
			t.Errorf("+25%% reg: case %s failed %v", c.Name, c.Failure != nil)
		}
	}
	if doc.Failures != 1 || doc.Tests != 2 {
		t.Errorf("+25%% reg: %d tests, %d failures; want 2, 1", doc.Tests, doc.Failures)
	}
	read(base, engineRun(t, "engine-lifecycle-again"))
	if doc.Failures != 0 || doc.Skipped != 0 {
		t.Errorf("A/A: %d failures, %d skipped", doc.Failures, doc.Skipped)
	}
	read(runOf("a", map[string][]float64{"reg": {1, 2}, "unreg_last": {1, 2}}), runOf("b", map[string][]float64{"reg": {3, 4}, "unreg_last": {3, 4}}))
	if doc.Skipped != 2 || doc.Failures != 0 {
		t.Errorf("2 repetitions: %d skipped, %d failures; want both gates skipped", doc.Skipped, doc.Failures)
	}
}

// Labels are columns, empty for a run without them.
func TestExportCSVLabels(t *testing.T) {
	a, b := engineRun(t, "engine-lifecycle"), engineRun(t, "engine-lifecycle-again")
	a.Result.Labels = map[string]string{"fw": "22.31", "commit": "abc"}
	data, err := ExportCSV([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	fw, ok := col["label:fw"]
	if _, ok2 := col["label:commit"]; !ok || !ok2 {
		t.Fatalf("no label columns in %v", recs[0])
	}
	for _, rec := range recs[1:] {
		want := ""
		if rec[col["run"]] == a.Dir {
			want = "22.31"
		}
		if rec[fw] != want {
			t.Fatalf("run %s: label:fw %q, want %q", rec[col["run"]], rec[fw], want)
		}
	}
}

// TestExportCSVFormulas: a text cell a spreadsheet would run as a formula
// (OWASP's CSV injection: =, +, -, @, tab, CR first) starts with ' and
// reads back as its text; a number, negative ones included, stays a
// number, in a numeric column or a text one.
func TestExportCSVFormulas(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"equals", `=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"plus", "+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"minus", "-2+3", "'-2+3"},
		{"at", "@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"tab", "\t=1", "'\t=1"},
		{"carriage return", "\r=1", "'\r=1"},
		{"negative number", "-1", "-1"},
		{"signed float", "+2.5e-3", "+2.5e-3"},
		{"plain", "22.31", "22.31"},
		{"formula later", "a=1", "a=1"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := engineRun(t, "engine-lifecycle")
			run.Result.Labels = map[string]string{"fw": tt.in}
			run.Result.Environment.Host = tt.in
			run.Result.Config.Seed = -7
			data, err := ExportCSV([]*Run{run})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			for _, rec := range recs[1:] {
				if rec[col["label:fw"]] != tt.want || rec[col["host"]] != tt.want {
					t.Fatalf("label %q host %q, want %q", rec[col["label:fw"]], rec[col["host"]], tt.want)
				}
				if rec[col["seed"]] != "-7" {
					t.Fatalf("seed %q, want the number -7", rec[col["seed"]])
				}
			}
		})
	}
}

// A CI matrix: runs of one workload in other configurations are other
// benchmarks (no collision, one chart each); runs that differ only in a
// label collide unless --name-labels names it; micro signs are written as u.
func TestExportNamesCarryConfiguration(t *testing.T) {
	mk := func(dir string, procs int, fw string) *Run {
		r := runOf(dir, map[string][]float64{"reg": {100, 110, 105, 102, 108}})
		r.Result.Config.Procs, r.Result.Config.Threads = procs, 1
		r.Result.Config.Rate = 2.5e3
		r.Result.Labels = map[string]string{"fw": fw}
		return r
	}
	a, b := mk("a", 1, "1.0"), mk("b", 2, "1.0")
	bmf, err := ExportBencher([]*Run{a, b}, ExportOptions{})
	if err != nil {
		t.Fatalf("two configurations of one workload: %v", err)
	}
	for _, want := range []string{"1x1", "2x1", "rate=2500"} {
		if !strings.Contains(string(bmf), want) {
			t.Errorf("bencher names lack %q: %s", want, bmf)
		}
	}
	c := mk("c", 1, "2.0")
	if _, err := ExportBencher([]*Run{a, c}, ExportOptions{}); err == nil || !strings.Contains(err.Error(), "--name-labels") {
		t.Errorf("runs that differ only in a label: %v, want a collision naming --name-labels", err)
	}
	smaller, _, err := ExportGitHubActionBenchmark([]*Run{a, c}, ExportOptions{NameLabels: []string{"fw"}})
	if err != nil || !strings.Contains(string(smaller), "fw=1.0]") || !strings.Contains(string(smaller), "fw=2.0]") {
		t.Errorf("--name-labels fw: %v\n%s", err, smaller)
	}
	if got := asciiSI("reg=2µs,unreg=2.5µs"); got != "reg=2us,unreg=2.5us" {
		t.Errorf("asciiSI = %q", got)
	}
}

// TestWorkloadFileNamedByItsName: a run of a workload file is called by
// the spec's name: in bench.txt, the exports, the CSV and the title, never
// by the path it was given as (../storm-rc.yaml/create); a result from
// before workload_name by the file's name.
func TestWorkloadFileNamedByItsName(t *testing.T) {
	for _, tt := range []struct{ arg, name, want string }{
		{"../specs/storm-rc.yaml", "rc-storm", "rc-storm"},
		{"../specs/storm-rc.yaml", "", "storm-rc"},
		{"lifecycle", "lifecycle", "lifecycle"},
	} {
		run := loadFixture(t, lifecycleFixture())
		run.Result.Config.Workload, run.Result.Config.WorkloadName = tt.arg, tt.name
		got := map[string]string{
			"bench.txt": benchTxtName(run.Result, results.OpReg),
			"export":    benchName(run, results.OpReg, nil),
			"title":     title(run.Result),
		}
		csv, err := ExportCSV([]*Run{run})
		if err != nil {
			t.Fatal(err)
		}
		// The CSV's data rows; its header and the command line column
		// (which reruns the file by its path) aside.
		rows := strings.Split(string(csv), "\n")
		got["csv"] = strings.Join(rows[1:], "\n")
		for where, s := range got {
			want := tt.want
			if where == "bench.txt" {
				want = benchPart(want) // benchfmt's name rules: rc_storm
			}
			if !strings.Contains(s, want) || strings.Contains(s, "../") || strings.Contains(s, ".yaml") {
				t.Errorf("%s (workload %q, name %q): %q, want %q and no path", where, tt.arg, tt.name, firstLine(s), want)
			}
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
