package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/results"
)

// firmwareSets: A (fw 1.0) the baseline; B (fw 1.1) with unreg_last 30%
// slower; C claims fw 1.1 too, but measures as A: B and C share a version
// and differ, which the comparison must warn about.
func firmwareSets() []RunSet {
	a := synth{reps: 5, noise: 0.01, seed: 1, fw: "1.0", labels: map[string]string{"fw": "1.0"}}.run("runs/a")
	b := synth{reps: 5, noise: 0.01, seed: 2, fw: "1.1", labels: map[string]string{"fw": "1.1"}, scale: map[string]float64{"unreg_last": 1.3}}.run("runs/b")
	c := synth{reps: 5, noise: 0.01, seed: 3, fw: "1.1", labels: map[string]string{"fw": "1.1-rebuilt"}}.run("runs/c")
	return []RunSet{{Name: "a", Runs: []*Run{a}}, {Name: "b", Runs: []*Run{b}}, {Name: "c", Runs: []*Run{c}}}
}

func TestCompareManyGolden(t *testing.T) {
	mc, err := CompareMany(firmwareSets(), "", defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	if err := mc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := mc.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare-3way.txt", text.Bytes())
	golden.Check(t, "compare-3way.md", md.Bytes())
	if mc.Regressions != 1 || !strings.Contains(mc.Verdict(), "b unreg_last p50 +29.4%") {
		t.Errorf("regressions %d, verdict %q: want b's unreg_last only", mc.Regressions, mc.Verdict())
	}
	if len(mc.Warnings) != 1 || mc.Warnings[0].Kind != warnFirmwareDiffers || !strings.Contains(mc.Warnings[0].Text, "b and c both report firmware 1.1 but differ significantly: unreg_last p50") {
		t.Errorf("firmware warnings %q", mc.Warnings)
	}
	for _, h := range []string{"a [fw 1.0]", "b [fw 1.1]", "c [fw 1.1]"} {
		if !strings.Contains(text.String(), h) {
			t.Errorf("no column header %q", h)
		}
	}
}

// Each column is exactly what a two-folder compare of the first set and
// that set finds: the same medians, delta, p and verdict.
func TestCompareManyMatchesPairs(t *testing.T) {
	sets := firmwareSets()
	mc, err := CompareMany(sets, "", defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(sets); i++ {
		c, err := Compare(sets[0].Runs[0], sets[i].Runs[0], defaultOpts())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Rows) != len(mc.Rows) {
			t.Fatalf("set %d: %d rows, pair has %d", i, len(mc.Rows), len(c.Rows))
		}
		for j, r := range c.Rows {
			got := mc.Rows[j].Cells[i]
			if mc.Rows[j].Kind != r.Kind || mc.Rows[j].Metric != r.Metric || got.Verdict != r.Verdict ||
				got.Center.Median != r.New.Median || mc.Rows[j].Cells[0].Center.Median != r.Base.Median ||
				deref(got.P) != deref(r.P) || deref(got.PAdj) != deref(r.PAdj) || deref(got.DeltaPct) != deref(r.DeltaPct) {
				t.Errorf("set %d row %s %s: %+v, pair %+v", i, r.Kind, r.Metric, got, r)
			}
		}
	}
}

// Grouped sets pool their runs' repetitions; labels they share are kept;
// a set one of whose runs does not know its firmware says so ("mixed")
// and is left out of the firmware warning.
func TestCompareManyPooled(t *testing.T) {
	a1 := synth{reps: 3, seed: 1, fw: "1.0", labels: map[string]string{"fw": "1.0", "board": "x"}}.run("a1")
	a2 := synth{reps: 3, seed: 2, fw: "1.0", labels: map[string]string{"fw": "1.0", "board": "y"}}.run("a2")
	b1 := synth{reps: 3, seed: 3, labels: map[string]string{"fw": "2.0"}}.run("b1")
	b1.Result.Environment.Device.FWVer = ""
	b2 := synth{reps: 3, seed: 4, fw: "2.0", labels: map[string]string{"fw": "2.0"}}.run("b2")
	mc, err := CompareMany([]RunSet{{Name: "fw=1.0", Runs: []*Run{a1, a2}}, {Name: "fw=2.0", Runs: []*Run{b1, b2}}}, "fw", defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	a, b := mc.Sets[0], mc.Sets[1]
	if a.Repetitions != 6 || b.Repetitions != 6 || a.FWVer != "1.0" || b.FWVer != mixedFW ||
		a.Labels["fw"] != "1.0" || a.Labels["board"] != "" || strings.Join(a.Dirs, " ") != "a1 a2" {
		t.Errorf("sets %+v %+v", a, b)
	}
	if c := mc.Rows[0].Cells[1]; c.Center.N != 6 {
		t.Errorf("pooled sample has %d values, want 6", c.Center.N)
	}
	var js bytes.Buffer
	if err := mc.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		By   string
		Sets []SetInfo
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.By != "fw" || len(back.Sets) != 2 {
		t.Errorf("json: %v %+v", err, back)
	}
	// Another workload in one set is refused, naming both folders.
	other := synth{reps: 3, seed: 5, workload: "steady"}.run("s1")
	if _, err := CompareMany([]RunSet{{Name: "x", Runs: []*Run{a1, other}}, {Name: "y", Runs: []*Run{b1}}}, "", defaultOpts()); err == nil ||
		!strings.Contains(err.Error(), "a1 ran \"lifecycle\", s1 ran \"steady\"") {
		t.Errorf("mixed workloads: %v", err)
	}
}

// One plot per gated metric, with every set on it.
func TestCompareManyFigures(t *testing.T) {
	mc, err := CompareMany(firmwareSets(), "", defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	figs, err := mc.Figures()
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != len(mc.Gates) || len(figs) == 0 {
		t.Fatalf("%d figures for %d gates", len(figs), len(mc.Gates))
	}
	for i, f := range figs {
		if len(f.PNG) == 0 || !bytes.Contains(f.SVG, []byte("c [fw 1.1]")) || !strings.HasPrefix(f.Name, "compare-") {
			t.Errorf("figure %s: png %d bytes, svg lacks the set names", f.Name, len(f.PNG))
		}
		// Each set's change from the first is drawn and labelled, against
		// the threshold's band: on a log axis of values +24% looked flat.
		var texts []string
		for _, tx := range svgTexts(f.SVG) {
			texts = append(texts, tx.text)
		}
		if want := fmt.Sprintf("within the threshold (±%g%%)", mc.Threshold); !slices.Contains(texts, want) {
			t.Errorf("figure %s: no threshold band %q among %q", f.Name, want, texts)
		}
		g := mc.Gates[i]
		for j, row := range mc.Rows {
			if row.Kind != g.Kind || row.Metric != g.Metric {
				continue
			}
			for k, c := range row.Cells[1:] {
				want := fmt.Sprintf("%+.1f%%", 100*(c.Center.Median/row.Cells[0].Center.Median-1))
				if !slices.Contains(texts, want) {
					t.Errorf("figure %s: set %d's change %s (row %d) not labelled among %q", f.Name, k+1, want, j, texts)
				}
			}
		}
	}
}

// TestCompareManyRefusesMixedBuilds: one label value pooling runs of
// different device builds (firmware version, PSID, driver version) is
// refused, naming both folders and every fact that differs; a fact one
// run does not know is no difference.
func TestCompareManyRefusesMixedBuilds(t *testing.T) {
	bom := func(fw, psid, drv string) *results.BOM {
		b := &results.BOM{}
		b.Device.FWVer, b.Device.BoardID, b.Device.Driver, b.Device.DriverVersion = fw, psid, "mlx5_core", drv
		return b
	}
	tests := []struct {
		name   string
		fw     [2]string
		bom    [2]*results.BOM
		refuse string // "" pooled
	}{
		{"one build", [2]string{"1.1", "1.1"}, [2]*results.BOM{bom("1.1", "MT_1", "5.8"), bom("1.1", "MT_1", "5.8")}, ""},
		{"fw_ver", [2]string{"1.1.2", "1.1.3"}, [2]*results.BOM{nil, nil}, "b1 and b2 differ in fw_ver 1.1.2 vs 1.1.3;"},
		{"psid", [2]string{"1.1", "1.1"}, [2]*results.BOM{bom("1.1", "MT_1", "5.8"), bom("1.1", "MT_2", "5.8")}, "b1 and b2 differ in psid MT_1 vs MT_2;"},
		{"driver and firmware", [2]string{"1.1", "1.1"}, [2]*results.BOM{bom("1.1.2", "MT_1", "5.8"), bom("1.1.3", "MT_1", "5.9")},
			"b1 and b2 differ in bom fw_ver 1.1.2 vs 1.1.3, driver_version 5.8 vs 5.9;"},
		{"a fact unknown", [2]string{"", "1.1"}, [2]*results.BOM{bom("", "", ""), bom("1.1", "MT_1", "5.8")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := synth{reps: 3, seed: 1, labels: map[string]string{"fw": "1.0"}}.run("a")
			var b []*Run
			for i := range 2 {
				r := synth{reps: 3, seed: int64(2 + i), labels: map[string]string{"fw": "1.1"}}.run(fmt.Sprintf("b%d", i+1))
				r.Result.Environment.Device.FWVer, r.Result.Environment.BOM = tt.fw[i], tt.bom[i]
				b = append(b, r)
			}
			_, err := CompareMany([]RunSet{{Name: "fw=1.0", Runs: []*Run{a}}, {Name: "fw=1.1", Runs: b}}, "fw", defaultOpts())
			switch {
			case tt.refuse == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refuse != "" && (err == nil || !errors.Is(err, results.ErrInput) || !strings.Contains(err.Error(), "set fw=1.1 pools different device builds: "+tt.refuse)):
				t.Errorf("error %v, want an input error naming %q", err, tt.refuse)
			}
		})
	}
}
