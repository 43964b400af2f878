package qualify

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// write writes the plots, junit.xml, qualification.html, the page
// printed as qualification.pdf, and qualification.json, each atomically,
// the JSON last: a folder with a qualification.json is a finished one,
// and it records whether the PDF was printed and, if not, why.
func write(ctx context.Context, out string, q *Qualification, runs map[string]*report.Run, base *Qualification, o Options) error {
	if err := os.MkdirAll(filepath.Join(out, PlotsDir), 0o755); err != nil {
		return err
	}
	inline := map[int]template.HTML{}
	for i, c := range o.Plan.Criteria {
		run := runs[c.Run]
		if run == nil || c.Firmware {
			continue // nothing to plot: a count of failures
		}
		var b *report.Run
		cp := CriterionPlotFor(q, i)
		if c.Relative {
			if base != nil {
				b, _ = report.LoadRun(filepath.Join(o.Baseline, RunsDir, c.Run))
			}
			l := c.Limit
			cp.RelPct = &l
		} else {
			l := c.Limit
			cp.Limit = &l
		}
		name := fmt.Sprintf("criterion-%d", i+1)
		f, err := report.CriterionFigure(name, c.Check+" ("+c.Run+")", c.Kind, c.Metric, run, b, cp)
		if err != nil {
			return err
		}
		rel := filepath.Join(PlotsDir, name+".svg")
		if err := results.WriteFileAtomic(filepath.Join(out, rel), f.SVG, 0o644); err != nil {
			return err
		}
		q.Criteria[i].Evidence = append(q.Criteria[i].Evidence, rel)
		// The page inlines it: one file a vendor can attach.
		inline[i] = report.InlineSVG(f.SVG)
	}
	soakInline, err := soakPlots(out, q)
	if err != nil {
		return err
	}
	var junit bytes.Buffer
	if err := report.WriteJUnit(&junit, JUnit(q)); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(out, JUnitFile), junit.Bytes(), 0o644); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := pageTmpl.Execute(&page, pageData{q, inline, soakInline}); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(out, HTMLFile), []byte(safetext.Text(page.String())), 0o644); err != nil {
		return err
	}
	// No PDF is never a failed qualification: the page is the record,
	// the PDF a copy for attaching; the JSON says why it is missing.
	q.PDF, q.PDFError = PDFFile, ""
	if o.NoPDF {
		// A PDF of an earlier --resume would not be this page's.
		if err := os.Remove(filepath.Join(out, PDFFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		q.PDF, q.PDFError = "", "not asked for (--no-pdf)"
	} else if err := printPDF(ctx, filepath.Join(out, HTMLFile), filepath.Join(out, PDFFile)); err != nil {
		q.PDF, q.PDFError = "", err.Error()
	}
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(out, JSONFile), append(data, '\n'), 0o644)
}

// runWarnings are what a run's result says its reader must know: the
// engine's warnings (a busy machine, more threads than CPUs, coordinated
// omission) and, for a run through the libibverbs test double, that it is
// not hardware.
func runWarnings(r *results.Result) []results.Warning {
	w := slices.Clone(r.Warnings)
	if report.IsTestDouble(r) {
		w = append(w, testDoubleWarning)
	}
	return w
}

// testDoubleWarning is the test double's banner as a run's warning.
var testDoubleWarning = results.Warning{Kind: results.WarnTestDouble, Severity: results.SeverityWarning, Text: report.TestDoubleBanner, Means: report.TestDoubleMeans}

// gatherWarnings collects every run's warnings, the battery's in the
// plan's order then the soak's, each text once with the runs that gave
// it, and the runs measured through the test double.
func gatherWarnings(steps []RunStep, runs map[string]*report.Run, soak []SoakRun) ([]RunWarning, []string) {
	var out []RunWarning
	var double []string
	add := func(name string, ws []results.Warning) {
		for _, w := range ws {
			if w == testDoubleWarning && !slices.Contains(double, name) {
				double = append(double, name)
			}
			i := slices.IndexFunc(out, func(x RunWarning) bool { return x.Text == w.Text })
			switch {
			case i < 0:
				out = append(out, RunWarning{Runs: []string{name}, Kind: w.Kind, Severity: w.Severity, Text: w.Text})
			case !slices.Contains(out[i].Runs, name):
				out[i].Runs = append(out[i].Runs, name)
			}
		}
	}
	for _, s := range steps {
		if run := runs[s.Name]; run != nil {
			add(s.Name, runWarnings(run.Result))
		}
	}
	for _, sr := range soak {
		add(sr.Name, sr.Warnings)
	}
	return out, double
}

// String is the warning as the outputs show it: its runs, then its text.
func (w RunWarning) String() string { return strings.Join(w.Runs, ", ") + ": " + w.Text }

// JUnit is the qualification as JUnit XML: a suite per part (conformance,
// runs, criteria, soak), a testcase per row, the numbers in each failure's
// message. JUnit has no verdict between pass and fail, so an inconclusive
// criterion is a skipped testcase of type "inconclusive" with its message:
// a CI page shows it neither as passed nor as failed, and the suites'
// verdict property and xrcbench's exit status say it was inconclusive. The
// runs' warnings are properties (warning.1, ...; test_double when a run
// went through the double) and each run's testcase carries its own.
func JUnit(q *Qualification) report.JUnitReport {
	props := []report.JUnitProperty{{Name: "plan", Value: q.Plan}, {Name: "provider", Value: q.Provider}, {Name: "verdict", Value: q.Verdict}}
	if len(q.TestDouble) > 0 {
		props = append(props, report.JUnitProperty{Name: "test_double", Value: "true: " + strings.Join(q.TestDouble, ", ") + " measured through the libibverbs test double, not hardware"})
	}
	for i, w := range q.Warnings {
		props = append(props, report.JUnitProperty{Name: fmt.Sprintf("warning.%d", i+1), Value: w.String()})
	}
	for _, f := range q.Device.Facts() {
		props = append(props, report.JUnitProperty{Name: "device." + f[0], Value: f[1]})
	}
	for _, k := range slices.Sorted(maps.Keys(q.Labels)) {
		props = append(props, report.JUnitProperty{Name: "label." + k, Value: q.Labels[k]})
	}
	if q.Baseline != nil {
		props = append(props, report.JUnitProperty{Name: "baseline", Value: q.Baseline.Dir})
		if d := q.Baseline.Device; d != nil && d.FWVer != "" {
			props = append(props, report.JUnitProperty{Name: "baseline.fw_ver", Value: d.FWVer})
		}
	}
	host, _ := os.Hostname()
	suite := func(name string) report.JUnitSuite {
		return report.JUnitSuite{Name: "qualify." + name, Timestamp: q.Started, Hostname: host, Properties: props}
	}
	conf, runs, crit, soak := suite("conformance"), suite("runs"), suite("criteria"), suite("soak")
	// Conformance runs its checks together, and the soak its runs: their
	// suites carry the wall time, their testcases none of their own.
	conf.Time = seconds(q.ConformanceSeconds)
	soak.Time = seconds(q.SoakSeconds)
	for _, r := range q.Conformance {
		conf.Cases = append(conf.Cases, rowCase(r, "qualify.conformance"))
	}
	for _, r := range q.Runs {
		c := report.JUnitCase{Name: r.Name, Classname: "qualify.runs", Time: seconds(r.Seconds), SystemOut: r.Command + "\n" + r.Dir}
		for _, w := range q.Warnings {
			if slices.Contains(w.Runs, r.Name) {
				c.SystemOut += "\n" + cmp.Or(w.Severity, results.SeverityWarning) + ": " + w.Text
			}
		}
		if r.Status != results.StatusOK {
			c.Failure = &report.JUnitOutcome{Message: fmt.Sprintf("run %s %s: %s", r.Name, r.Status, r.Error), Type: r.Status}
		}
		runs.Cases = append(runs.Cases, c)
	}
	for _, r := range q.Criteria {
		if q.Verdict == NotJudged {
			// A disturbed qualification passes and fails nothing: a CI page
			// must not show its criteria as failed (or passed) either.
			r.Verdict, r.Message = NotJudged, "not judged, the runs were disturbed ("+firstN(q.Disturbed, 3)+"); as measured: "+r.Message
		}
		crit.Cases = append(crit.Cases, rowCase(r, "qualify.criteria."+r.Run))
	}
	suites := []report.JUnitSuite{conf, runs, crit}
	for _, r := range q.Soak {
		soak.Cases = append(soak.Cases, rowCase(r, "qualify.soak."+r.Run))
	}
	if len(soak.Cases) > 0 {
		suites = append(suites, soak)
	}
	return report.JUnitReport{Name: "xrcbench qualify " + q.Plan, Suites: suites}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func rowCase(r Row, class string) report.JUnitCase {
	c := report.JUnitCase{Name: r.Name, Classname: class, Time: seconds(r.Seconds)}
	ev := ""
	for _, e := range r.Evidence {
		ev += "evidence: " + e + "\n"
	}
	c.SystemOut = r.Message + "\n" + ev
	o := &report.JUnitOutcome{Message: r.Message, Type: r.Verdict, Text: ev}
	switch r.Verdict {
	case Fail:
		c.Failure = o
	case Error:
		c.Error = o
	case Skipped, Inconclusive, NotJudged:
		c.Skipped = o
	}
	return c
}

var pageTmpl = template.Must(template.New("q").Funcs(template.FuncMap{
	"kv": func(m any) [][2]string {
		var out [][2]string
		switch m := m.(type) {
		case *results.Device:
			out = m.Facts()
		case map[string]string:
			for _, k := range slices.Sorted(maps.Keys(m)) {
				out = append(out, [2]string{k, m[k]})
			}
		}
		return out
	},
	"join":       strings.Join,
	"upper":      verdictWord,
	"beside":     beside,
	"firstFacts": firstFacts,
	"testDouble": func() string { return report.TestDoubleBanner },
	// The banner says the test double's warning once, above the rest.
	"warnings": func(ws []RunWarning) []RunWarning {
		return slices.DeleteFunc(slices.Clone(ws), func(w RunWarning) bool { return w.Text == report.TestDoubleBanner })
	},
	"labels": labelText,
	"value":  fmtValue,
	"limit":  fmtLimit,
	"byKind": byKind,
	"pval": func(p *float64) string {
		if p == nil {
			return ""
		}
		return fmt.Sprintf("%.2g", *p)
	},
	"soakFigs": func(name string) []string { return []string{name + "-qps", name + "-memory", name + "-p99"} },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>xrcbench qualification: {{.Verdict}}</title>
<style>
body{font-family:sans-serif;margin:1.5em 2em;max-width:100em}
h1{font-size:1.5em;margin:.2em 0 .4em}
#verdict{font-size:1.5em;padding:.4em .6em;border-radius:.3em;margin:.4em 0}
.pass{background:#dfd}.fail{background:#fdd}.error{background:#fed}.skipped{background:#eee}.inconclusive{background:#ffc}
.banner{border:2px solid #c60;background:#fec;padding:.4em .6em;margin:.4em 0}
.differs td{font-weight:bold}.not_judged{background:#ddf}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}
figure svg{width:100%;max-width:48em;height:auto}
/* The first screen: verdict, criteria and device side by side where the
   window is wide enough, compact, so that a 1400×1000 window and the
   first printed page hold them all. */
#first{display:flex;flex-wrap:wrap;gap:0 2.5em;align-items:flex-start}
#first h2{font-size:1.15em;margin:.5em 0 .2em}
#first table{font-size:.9em;margin:.2em 0}
#first td,#first th{padding:.15em .45em}
#criteria-table td:nth-child(n+2),#first th{white-space:nowrap}
@page{margin:12mm}
@media print{
body{margin:0;max-width:none;font-size:9pt}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
#first{display:block}
#evidence{break-before:page}
figure,tr,details{break-inside:avoid}
a{color:inherit}
}
</style></head><body>
<h1>xrcbench qualification</h1>
{{with .TestDouble}}<p class="banner" id="test-double"><b>Not hardware ({{join . ", "}}).</b> {{testDouble}}</p>{{end}}
<p id="verdict" class="{{.Verdict}}">{{.Headline}}</p>
{{with .Baseline}}{{if .Accepted}}<p class="banner" id="baseline-accepted"><b>Judged against a baseline whose own verdict was {{upper .Verdict}}</b>, accepted with --accept-baseline: {{or .Headline .Summary}}</p>{{end}}{{end}}
{{with .Disturbed}}<p class="banner" id="disturbed"><b>{{if $.AcceptedDisturbed}}Judged with --accept-disturbed although the runs were disturbed{{else}}Not judged: the runs were disturbed{{end}}</b>
beyond the plan's quality thresholds{{with $.Quality}} (min_cpu_share {{.MinCPUShare}}%, max_duration_departure {{.MaxDurationDeparture}}%, warnings {{join .Warnings ", "}}){{end}}:
{{len .}} reason(s), <a href="#disturbed-reasons">listed under the evidence</a>.</p>{{end}}
<div id="first">
<section><h2 id="criteria">Criteria</h2>
<table id="criteria-table"><tr><th>criterion</th><th>{{with .Baseline}}{{or (labels .Labels) "baseline"}} → {{end}}{{or (labels .Labels) "candidate"}}</th><th>limit</th><th>p</th><th>verdict</th></tr>
{{range .Criteria}}<tr class="{{.Verdict}}"><td>{{.Name}}</td><td>{{value .Value .Unit}}{{with .Repetition}} (repetition {{.}}){{end}}</td><td>{{limit .Limit .Unit}}</td><td>{{pval .P}}</td><td>{{.Verdict}}</td></tr>
{{end}}</table></section>
<section><h2 id="device-facts">Device</h2>
<table id="{{if .Baseline}}beside{{else}}device{{end}}">{{if .Baseline}}<tr><th></th><th>candidate</th><th>baseline</th></tr>
{{end}}<tr><th>provider</th><td>{{.Provider}}</td>{{with .Baseline}}<td></td>{{end}}</tr>
{{range firstFacts .Qualification}}<tr{{if and $.Baseline (ne (index . 1) (index . 2))}} class="differs"{{end}}><th>{{index . 0}}</th><td>{{index . 1}}</td>{{if $.Baseline}}<td>{{index . 2}}</td>{{end}}</tr>
{{end}}</table></section>
</div>
<h2 id="evidence">Evidence</h2>
<p>Everything below supports the verdict above.</p>
<p id="summary">{{.Summary}}</p>
{{with .Disturbed}}<h3 id="disturbed-reasons">Why the runs count as disturbed</h3>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range $i, $c := .Criteria}}<h3>{{$c.Name}}: {{$c.Verdict}}</h3>
<p>{{$c.Message}}</p>
{{with index $.Plots $i}}<figure>{{.}}</figure>{{end}}
<p>Evidence: {{range $c.Evidence}}{{.}} {{end}}</p>
{{end}}
{{with warnings .Warnings}}<h2>Warnings</h2>
{{range byKind .}}<details class="warnings" open><summary><b>{{.Kind}}</b>: {{.Count}} warning(s) from {{join .Runs ", "}}</summary>
<ul>{{range .Warnings}}<li><b>{{join .Runs ", "}}</b>: {{.Text}}</li>
{{end}}</ul></details>
{{end}}{{end}}
<h2>Device and firmware</h2>
<table>
<tr><th>provider</th><td>{{.Provider}}</td></tr>
{{range kv .Device}}<tr><th>device {{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
{{range kv .Labels}}<tr><th>label {{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
<tr><th>plan</th><td>{{with .PlanAsRun}}{{.Origin}}{{else}}{{$.Plan}} {{$.PlanFile}}{{end}}</td></tr>
<tr><th>time</th><td>{{.Started.Format "2006-01-02 15:04:05Z"}} to {{.Finished.Format "15:04:05Z"}}</td></tr>
</table>
{{template "bom" .Qualification}}
<h2>Baseline</h2>
{{with .Baseline}}<table>
<tr><th>folder</th><td>{{.Dir}}</td></tr>
<tr><th>verdict</th><td class="{{.Verdict}}">{{.Summary}}</td></tr>
{{range kv .Device}}<tr><th>device {{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
{{range kv .Labels}}<tr><th>label {{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
</table>{{end}}
{{template "beside" .Qualification}}{{if not .Baseline}}<p>None: criteria relative to a baseline were not judged.</p>{{end}}
{{if .Soak}}<h2>Soak</h2>
<table><tr><th>check</th><th>verdict</th><th>what was measured</th></tr>
{{range .Soak}}<tr class="{{.Verdict}}"><td>{{.Name}}</td><td>{{.Verdict}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
{{range .SoakRuns}}<p>{{.Name}}: live QPs read by {{.QPMethod}}</p>
{{range soakFigs .Name}}{{with index $.SoakPlots .}}<figure>{{.}}</figure>{{end}}{{end}}
{{end}}{{end}}
<h2>Conformance</h2>
{{if .Conformance}}<table><tr><th>check</th><th>verdict</th><th>detail</th></tr>
{{range .Conformance}}<tr class="{{.Verdict}}"><td>{{.Name}}</td><td>{{.Verdict}}</td><td>{{.Message}}</td></tr>
{{end}}</table>{{else}}<p>Not part of this plan.</p>{{end}}
<h2>Runs</h2>
<table><tr><th>run</th><th>status</th><th>time</th><th>command</th><th>folder</th></tr>
{{range $r := .Runs}}<tr><td>{{.Name}}</td><td>{{.Status}}{{if .Reused}} (reused){{end}}{{with .Error}}: {{.}}{{end}}</td><td>{{printf "%.1f" .Seconds}} s</td><td><code>{{.Command}}</code></td><td>{{with .Report}}<a href="{{.}}">{{$r.Dir}}</a>{{else}}{{.Dir}}{{with .ReportError}} (no report: {{.}}){{end}}{{end}}</td></tr>
{{end}}</table>
</body></html>
`))

// soakPlots draws each soak run's live QPs, memory and p99 over time,
// into plots/ and, by name, for the page to inline.
func soakPlots(out string, q *Qualification) (map[string]template.HTML, error) {
	inline := map[string]template.HTML{}
	for _, sr := range q.SoakRuns {
		st := report.Stamp{Line: "soak run " + sr.Name}
		if r, err := results.Load(sr.Dir); err == nil {
			st = report.RunStamp(r)
		}
		var at, qps, rss, pss, iv []float64
		for _, s := range sr.Samples {
			at = append(at, s.AtSec)
			qps = append(qps, float64(s.LiveQPs))
			rss = append(rss, float64(s.RSSKB)/1024)
			pss = append(pss, float64(s.PSSKB)/1024)
		}
		for i := range sr.P99 {
			iv = append(iv, float64(i+1))
		}
		figs := []struct {
			name, title, x, y string
			latency           bool
			series            []report.TimeLine
		}{
			{sr.Name + "-qps", sr.Name + ": the device's live QPs (" + sr.QPMethod + ")", "seconds", "live QPs", false, []report.TimeLine{{Label: "live QPs", X: at, Y: qps}}},
			{sr.Name + "-memory", sr.Name + ": the workers' memory", "seconds", "MiB", false, []report.TimeLine{{Label: "RSS", X: at, Y: rss}, {Label: "PSS", X: at, Y: pss}}},
			{sr.Name + "-p99", sr.Name + ": " + sr.P99Kind + " p99 per interval", "interval", "p99 latency", true, []report.TimeLine{{Label: sr.P99Kind + " p99", X: iv, Y: sr.P99}}},
		}
		for _, f := range figs {
			fig, err := report.SeriesFigure(f.name, f.title, f.x, f.y, f.latency, f.series, st)
			if err != nil {
				return nil, err
			}
			if err := results.WriteFileAtomic(filepath.Join(out, PlotsDir, f.name+".svg"), fig.SVG, 0o644); err != nil {
				return nil, err
			}
			inline[f.name] = report.InlineSVG(fig.SVG)
		}
	}
	return inline, nil
}

// beside is the candidate's and the baseline's identity side by side:
// verdict, dates, labels, device facts, plan and bill of materials, a row
// per fact either has, "" where one lacks it.
func beside(q *Qualification) [][3]string {
	b := q.Baseline
	if b == nil {
		return nil
	}
	rows := [][3]string{
		{"verdict", verdictWord(q.Verdict), verdictWord(b.Verdict)},
		{"date", q.Started.Format("2006-01-02 15:04Z"), b.Started.Format("2006-01-02 15:04Z")},
	}
	if b.Started.IsZero() {
		rows[1][2] = "" // a baseline written before its date was recorded
	}
	var cand, base [][2]string
	for _, k := range slices.Sorted(maps.Keys(q.Labels)) {
		cand = append(cand, [2]string{"label " + k, q.Labels[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(b.Labels)) {
		base = append(base, [2]string{"label " + k, b.Labels[k]})
	}
	for _, f := range q.Device.Facts() {
		cand = append(cand, [2]string{"device " + f[0], f[1]})
	}
	for _, f := range b.Device.Facts() {
		base = append(base, [2]string{"device " + f[0], f[1]})
	}
	if q.PlanAsRun != nil {
		cand = append(cand, [2]string{"plan", q.PlanAsRun.Origin})
	}
	if b.PlanAsRun != nil {
		base = append(base, [2]string{"plan", b.PlanAsRun.Origin})
	}
	if q.BOM != nil {
		cand = append(cand, q.BOM.BOMRows()...)
	}
	if b.BOM != nil {
		base = append(base, b.BOM.BOMRows()...)
	}
	// In the candidate's order, then what only the baseline has.
	at := map[string]int{}
	for _, c := range cand {
		if _, ok := at[c[0]]; !ok {
			at[c[0]] = len(rows)
			rows = append(rows, [3]string{c[0], c[1], ""})
		}
	}
	for _, c := range base {
		if i, ok := at[c[0]]; ok {
			rows[i][2] = c[1]
			continue
		}
		at[c[0]] = len(rows)
		rows = append(rows, [3]string{c[0], "", c[1]})
	}
	return rows
}

// firstFacts are the facts of the page's first screen: the date, the
// labels, the device, its firmware, PSID, driver and rdma-core, the
// xrcbench and kernel that measured, and the plan as run; beside the
// baseline's where there is one (its verdict first). The rest of the
// bill of materials is in the evidence.
func firstFacts(q *Qualification) [][3]string {
	keep := func(k string) bool {
		return strings.HasPrefix(k, "label ") || slices.Contains([]string{"verdict", "date", "device name", "device fw_ver", "plan",
			"firmware", "board_id (PSID)", "driver", "driver version", "libibverbs", "libibverbs version",
			"kernel release", "xrcbench version", "test double cost model"}, k)
	}
	if q.Baseline != nil {
		return slices.DeleteFunc(beside(q), func(r [3]string) bool { return !keep(r[0]) })
	}
	rows := [][3]string{{"date", q.Started.Format("2006-01-02 15:04Z"), ""}}
	for _, k := range slices.Sorted(maps.Keys(q.Labels)) {
		rows = append(rows, [3]string{"label " + k, q.Labels[k], ""})
	}
	var facts [][2]string
	for _, f := range q.Device.Facts() {
		facts = append(facts, [2]string{"device " + f[0], f[1]})
	}
	if q.PlanAsRun != nil {
		facts = append(facts, [2]string{"plan", q.PlanAsRun.Origin})
	} else {
		facts = append(facts, [2]string{"plan", strings.TrimSpace(q.Plan + " " + q.PlanFile)})
	}
	if q.BOM != nil {
		facts = append(facts, q.BOM.BOMRows()...)
	}
	for _, f := range facts {
		if keep(f[0]) {
			rows = append(rows, [3]string{f[0], f[1], ""})
		}
	}
	return rows
}

// The candidate beside its baseline, every fact, in the evidence.
var _ = template.Must(pageTmpl.New("beside").Parse(`{{with beside .}}<table id="beside-full"><tr><th></th><th>candidate</th><th>baseline</th></tr>
{{range .}}<tr{{if ne (index . 1) (index . 2)}} class="differs"{{end}}><th>{{index . 0}}</th><td>{{index . 1}}</td><td>{{index . 2}}</td></tr>
{{end}}</table>{{end}}
`))

// pageData is what the page shows: the qualification and its criteria's
// plots as inline SVG, by criterion index.
type pageData struct {
	*Qualification
	Plots     map[int]template.HTML
	SoakPlots map[string]template.HTML // by name: lifecycle-qps
}

// CriterionPlotFor is how criterion i of q is drawn: the labels of the
// two qualifications in the legend, the candidate red when it failed.
func CriterionPlotFor(q *Qualification, i int) report.CriterionPlot {
	cp := report.CriterionPlot{CandLabel: labelText(q.Labels)}
	if q.Baseline != nil {
		cp.BaseLabel = labelText(q.Baseline.Labels)
	}
	if i < len(q.Criteria) {
		cp.Failed = q.Criteria[i].Verdict == Fail
	}
	return cp
}

// labelText is a qualification's labels as key=value, sorted.
func labelText(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, " ")
}

// fmtValue writes a criterion's figure in its unit: a duration, a rate,
// or a change in percent; "" when it has none.
func fmtValue(v *float64, unit string) string {
	if v == nil {
		return ""
	}
	switch unit {
	case "ns":
		// Three significant figures: 2.12ms, not 2.123775ms.
		d := time.Duration(math.Round(*v))
		if d >= 1000 {
			d = d.Round(time.Duration(math.Pow(10, math.Floor(math.Log10(float64(d)))-2)))
		}
		return d.String()
	case "%":
		return fmt.Sprintf("%+.1f%%", *v)
	case "ops/s":
		return fmt.Sprintf("%.0f ops/s", *v)
	}
	return fmt.Sprintf("%g %s", *v, unit)
}

// fmtLimit writes a limit in its unit; a relative one is a bound on the
// regression.
func fmtLimit(v *float64, unit string) string {
	if v == nil {
		return ""
	}
	if unit == "%" {
		return fmt.Sprintf("≤ %g%% worse", *v)
	}
	return fmtValue(v, unit)
}

// warningGroup is the runs' warnings of one kind.
type warningGroup struct {
	Kind     string
	Count    int
	Runs     []string
	Warnings []RunWarning
}

// byKind groups warnings by kind, in the order each kind first came, with
// how many there are and the runs that gave them: 60 bullets of one kind
// are one line to read first.
func byKind(ws []RunWarning) []warningGroup {
	var out []warningGroup
	for _, w := range ws {
		k := w.Kind
		if k == "" {
			k = results.WarnUnclassified
		}
		i := slices.IndexFunc(out, func(g warningGroup) bool { return g.Kind == k })
		if i < 0 {
			out = append(out, warningGroup{Kind: k})
			i = len(out) - 1
		}
		g := &out[i]
		g.Count++
		g.Warnings = append(g.Warnings, w)
		for _, r := range w.Runs {
			if !slices.Contains(g.Runs, r) {
				g.Runs = append(g.Runs, r)
			}
		}
	}
	return out
}
