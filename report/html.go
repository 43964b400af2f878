package report

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// svgProlog matches what precedes <svg in gonum's output (the XML
// declaration and a comment), which has no place inside an HTML document.
var svgProlog = regexp.MustCompile(`(?s)^.*?(<svg\b)`)

func InlineSVG(b []byte) template.HTML {
	s := svgProlog.ReplaceAllString(string(b), "$1")
	// gonum writes a fixed size in points; let CSS scale it to the page.
	s = strings.Replace(s, "<svg ", `<svg role="img" preserveAspectRatio="xMidYMid meet" `, 1)
	return template.HTML(s)
}

type kv struct{ K, V string }

type htmlFigure struct {
	Figure
	Inline template.HTML
}

type htmlRepRow struct {
	Kind, Metric, Median, MAD, Values, Outliers string
}

type htmlRun struct {
	Run       *Run
	Title     string
	Heading   string // the section's heading: the title, or "Details" alone on the page
	Expected  bool   // a kind must fail: show the "expected" column
	Status    string
	Warnings  []string
	Firmware  []string
	Env       []kv
	BOM       []kv // the bill of materials; nil for a result that predates it
	Config    []kv
	Harness   []kv
	Command   string
	Spec      string
	Rows      []row
	Open      *htmlOpenLoop // nil: a closed loop
	RepRows   []htmlRepRow
	Figures   []htmlFigure
	RepsCount int
	Storm     *stormTable // nil: not a storm
}

// htmlOpenLoop is an open loop's table: what became of the schedule, and
// each kind's service and response times.
type htmlOpenLoop struct {
	Arrival, Requested, Achieved, Schedule string
	Saturated                              bool
	Rows                                   []responseRow
}

func newHTMLOpenLoop(run *Run) *htmlOpenLoop {
	ol := run.Result.OpenLoop
	if ol == nil {
		return nil
	}
	return &htmlOpenLoop{Arrival: ol.Arrival, Requested: units.FormatRate(ol.RequestedOpsPerSec), Achieved: units.FormatRate(ol.AchievedOpsPerSec),
		Schedule: openLoopSchedule(ol), Saturated: ol.Saturated, Rows: responseRows(run)}
}

type htmlPage struct {
	Title string
	// Single: one run, whose section needs no title of its own (the
	// page's is the run's).
	Single     bool
	TestDouble bool // some run went through the libibverbs test double
	// TestDoubleRuns names those runs when the page has several.
	TestDoubleRuns []string
	Headlines      []htmlHeadline
	Runs           []htmlRun
	Overlays       []htmlFigure
	Sweep          *htmlSweep
}

// htmlHeadline is one run's part of the headline section.
type htmlHeadline struct {
	Label       string // the run's title when the page has several
	Status      string
	Kinds       []string
	Destruction string
	Notes       []string
	Figures     []htmlFigure
}

func newHTMLHeadline(run *Run, labelled bool, figs []Figure) htmlHeadline {
	h := newHeadline(run)
	hh := htmlHeadline{Status: run.Result.Status, Kinds: h.Kinds, Figures: htmlFigures(figs)}
	if labelled {
		hh.Label = run.Label + ": " + title(run.Result)
	}
	if h.Destruction != nil {
		hh.Destruction = h.Destruction.sentence()
	}
	for _, n := range h.Notes {
		if n != TestDoubleBanner { // the page's banner says it once
			hh.Notes = append(hh.Notes, n)
		}
	}
	return hh
}

type htmlSweep struct {
	*sweepReport
	Figures []htmlFigure
}

func envRows(r *results.Result) []kv {
	e := r.Environment
	rows := []kv{
		{"host", e.Host}, {"kernel", e.Kernel}, {"CPU", fmt.Sprintf("%s × %d", e.CPUModel, e.CPUs)},
		{"provider", e.Provider},
	}
	for _, f := range e.Device.Facts() {
		rows = append(rows, kv{"device " + f[0], f[1]})
	}
	for _, k := range slices.Sorted(maps.Keys(e.ProviderDetail)) {
		rows = append(rows, kv{k, e.ProviderDetail[k]})
	}
	return append(rows, kv{"Go", e.GoVersion}, kv{"xrcbench", e.Version})
}

// bomRows is the result's bill of materials, each fact or why it could
// not be read.
func bomRows(r *results.Result) []kv {
	var rows []kv
	for _, row := range r.Environment.BOM.BOMRows() {
		rows = append(rows, kv{row[0], row[1]})
	}
	return rows
}

func configRows(r *results.Result) []kv {
	c := r.Config
	rows := []kv{
		{"workload", c.Workload}, {"provider", c.Provider},
		{"processes × threads", fmt.Sprintf("%d × %d", c.Procs, c.Threads)}, {"QPs", fmt.Sprint(c.QPs)},
		{"QP state", c.QPStateOf()},
	}
	if c.Device != "" {
		rows = append(rows, kv{"device", c.Device})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		rows = append(rows, kv{"label " + k, r.Labels[k]})
	}
	if c.Duration > 0 {
		rows = append(rows, kv{"duration (requested)", c.Duration.D().String()})
	}
	if len(r.Repetitions) > 0 {
		v := roundDuration(measured(r)).String() + " in all"
		if stoppedEarly(r) {
			v += ", stopped early"
		}
		rows = append(rows, kv{"measured", v})
	}
	if c.Iterations > 0 {
		rows = append(rows, kv{"iterations", fmt.Sprint(c.Iterations)})
	}
	rows = append(rows, kv{"warm-up", c.Warmup.D().String()}, kv{"repetitions", fmt.Sprint(c.Repetitions)},
		kv{"pinned", fmt.Sprint(c.Pin)}, kv{"seed", fmt.Sprint(c.Seed)}, kv{"interval", c.Interval.D().String()})
	for _, k := range slices.Sorted(maps.Keys(c.ProviderOpts)) {
		rows = append(rows, kv{k, c.ProviderOpts[k]})
	}
	rows = append(rows, kv{"started", r.Started.UTC().Format(time.RFC3339)}, kv{"finished", r.Finished.UTC().Format(time.RFC3339)})
	return rows
}

func harnessRows(r *results.Result) []kv {
	h := r.Harness
	rows := []kv{
		{"timer", h.Timer}, {"timer overhead", timerOverhead(h)}, {"start skew", units.FormatNS(float64(h.StartSkewNS))},
		{"warm-up", h.Warmup.D().String()}, {"repetitions", fmt.Sprint(h.Repetitions)},
	}
	rows = append(rows, coverageRows(h)...)
	if m := h.Memory; m != nil {
		v := fmt.Sprintf("PSS %s, RSS %s (RSS counts shared pages in every process)", formatKiB(m.PSSKB), formatKiB(m.RSSKB))
		if m.PeakRSSKB > 0 {
			v = fmt.Sprintf("PSS %s, RSS %s as the threads stopped measuring; peak sampled while they measured PSS %s, RSS %s (RSS counts shared pages in every process)",
				formatKiB(m.PSSKB), formatKiB(m.RSSKB), formatKiB(m.PeakPSSKB), formatKiB(m.PeakRSSKB))
		}
		rows = append(rows, kv{"worker memory (a repetition's workers, summed)", v})
	}
	if h.BatchSize > 0 { // result files written before batches were counted
		rows = append(rows, kv{"batch size", fmt.Sprint(h.BatchSize)})
	}
	// The mean batch per kind: the hot path makes one cgo call per batch,
	// so this says how much of each op the call's own cost is spread over.
	var batches []string
	for _, kind := range results.OpKinds {
		if s, ok := r.Ops[kind]; ok && s.Batches > 0 {
			batches = append(batches, fmt.Sprintf("%s %.1f", kind, float64(s.Count)/float64(s.Batches)))
		}
	}
	if len(batches) > 0 {
		rows = append(rows, kv{"ops per batch (one cgo call each)", strings.Join(batches, ", ")})
	}
	if l := r.Leaks; l != nil {
		v := "not checked"
		if l.Checked {
			v = fmt.Sprintf("%d leaked (%s)", len(l.Leaked), l.Method)
		}
		rows = append(rows, kv{"leak check", v})
		switch {
		case l.DestroysUnconfirmed != nil:
			rows = append(rows, kv{"destructions not confirmed by the device", fmt.Sprintf("%d (%s)", *l.DestroysUnconfirmed, l.DeviceList)})
		case l.DeviceList != "":
			rows = append(rows, kv{"destructions not confirmed by the device", l.DeviceList})
		}
	}
	return rows
}

func repRows(run *Run) []htmlRepRow {
	var rows []htmlRepRow
	for _, kind := range run.Kinds {
		for _, name := range summaryMetrics {
			m, _ := MetricByName(name)
			rs := RepetitionStats(run.Result, kind, m)
			if len(rs.Values) == 0 {
				continue
			}
			var vals, outs []string
			for _, v := range rs.Values {
				vals = append(vals, m.Format(v))
			}
			for _, i := range rs.Outliers {
				outs = append(outs, fmt.Sprintf("#%d", i+1)) // counted from 1, as run and qualify count
			}
			rows = append(rows, htmlRepRow{
				Kind: kind, Metric: name, Median: m.Format(rs.Median),
				MAD:    madCell(rs),
				Values: strings.Join(vals, " "), Outliers: strings.Join(outs, " "),
			})
		}
	}
	return rows
}

// madCell is a MAD with its share of the median; one value has no
// deviation to speak of.
func madCell(rs RepStats) string {
	if len(rs.Values) < 2 {
		return "n/a"
	}
	return fmt.Sprintf("%s (%.1f%%)", rs.Metric.Format(rs.MAD), 100*rs.Variation)
}

func htmlFigures(figs []Figure) []htmlFigure {
	var out []htmlFigure
	for _, f := range figs {
		out = append(out, htmlFigure{Figure: f, Inline: InlineSVG(f.SVG)})
	}
	return out
}

func newHTMLRun(run *Run, figs []Figure, titled bool) htmlRun {
	r := run.Result
	heading := "Details"
	if titled {
		heading = run.Label + ": " + title(r)
	}
	return htmlRun{
		Run: run, Title: title(r), Heading: heading, Expected: anyExpected(run), Status: r.Status, Warnings: warningLines(run), Firmware: firmwareNotes(r),
		Env: envRows(r), BOM: bomRows(r), Config: configRows(r), Harness: harnessRows(r),
		Command: strings.Join(append(quoteEnv(r.Config.CommandEnv), quoteArgs(r.Config.CommandLine)...), " "), Spec: r.Config.WorkloadSpec,
		Rows: summaryRows(run), Open: newHTMLOpenLoop(run), RepRows: repRows(run), Figures: htmlFigures(figs), RepsCount: len(r.Repetitions),
		Storm: newHTMLStorm(r.Storm),
	}
}

// newHTMLStorm is a storm's tables, as summary.md has them; nil for a run
// that is not a storm.
func newHTMLStorm(st *results.Storm) *stormTable {
	if st == nil {
		return nil
	}
	t := stormTables(st)
	return &t
}

// quoteArgs quotes arguments a shell would split, so the command line can
// be pasted back.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// quoteEnv writes the environment a command line needs (NAME=VALUE) as a
// shell's assignments before it, each value quoted as quoteArgs would.
func quoteEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, k+"="+quoteArgs([]string{v})[0])
	}
	return out
}

var TemplateFuncs = template.FuncMap{
	"ns":           func(v int64) string { return units.FormatNS(float64(v)) },
	"nsf":          units.FormatNS,
	"rate":         units.FormatRate,
	"reps":         acrossReps,
	"plural":       units.Plural,
	"expected":     expectedCell,
	"testDouble":   func() string { return TestDoubleBanner },
	"join":         strings.Join,
	"responseNote": func() string { return responseNote },
}

// PageHead opens each page report writes (report.html, fleet.html) up
// to the style rules they share, tables' above all, with the page's
// maxWidth; the page adds its own rules and closes the <style>.
func PageHead(maxWidth string) string {
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: ` + maxWidth + `; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
`
}

// FigureTemplate is {{template "figure" .}}: a Figure inline, with its
// title and caption, alike on every page.
const FigureTemplate = `{{define "figure"}}<figure id="{{.Name}}">{{.Inline}}<figcaption><b>{{.Title}}.</b> {{.Caption}}</figcaption></figure>{{end}}`

// The page has no script, no external stylesheet, font or image: every
// plot is inline SVG, so the file can be mailed or archived alone.
var page = template.Must(template.New("report").Funcs(TemplateFuncs).Parse(FigureTemplate + PageHead("70em") + `.status-ok { color: #17612b; } .status-partial { color: #a35b00; } .status-failed { color: #b00020; }
.warnings { background: #fff4e5; border-left: 4px solid #e69500; padding: .5em 1em; }
.nowarn { color: #17612b; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; white-space: pre-wrap; }
figure { margin: 1.5em 0; } figure svg { width: 100%; max-width: 56em; height: auto; display: block; overflow: visible; }
figcaption { color: #555; font-size: .9em; }
.cols { display: flex; flex-wrap: wrap; gap: 2em; }
.banner { background: #fde8ea; border: 2px solid #b00020; color: #5c0010; padding: .6em 1em; font-size: 1.05em; }
#headline { background: #f4f8fc; border-left: 4px solid #4682b4; padding: .2em 1em .5em; }
#headline h2 { border: none; } #headline li { margin: .2em 0; } .note { color: #444; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .TestDouble}}<p class="banner" id="test-double"><b>Not hardware{{with .TestDoubleRuns}} ({{join . ", "}}){{end}}.</b> {{testDouble}}</p>{{end}}
<section id="headline">
<h2>Headline</h2>
{{range .Headlines}}{{with .Label}}<h3>{{.}}</h3>{{end}}
{{if and .Status (ne .Status "ok")}}<p class="status-{{.Status}}">Status {{.Status}}: see the warnings below.</p>{{end}}
<ul>{{range .Kinds}}<li>{{.}}</li>{{end}}{{with .Destruction}}<li><b>{{.}}</b></li>{{end}}</ul>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{range .Figures}}{{template "figure" .}}
{{end}}{{end}}</section>
{{with .Sweep}}
<section id="sweep">
<h2>Sweep: {{.Workload}} on {{.Provider}}</h2>
<table>
<tr><th>point</th><th>procs</th><th>threads</th><th>QPs</th><th>status</th>{{range .Kinds}}<th>{{.}} ops/s</th><th>{{.}} p99</th>{{end}}</tr>
{{range .Points}}<tr><td>{{.Dir}}</td><td class="n">{{.Procs}}</td><td class="n">{{.Threads}}</td><td class="n">{{.QPs}}</td><td>{{.Status}}</td>{{range .Cells}}<td class="n">{{.Rate}}</td><td class="n">{{.P99}}</td>{{end}}</tr>
{{end}}</table>
{{range .Notes}}<p class="warnings">{{.}}</p>{{end}}
{{range .Figures}}{{template "figure" .}}
{{end}}</section>
{{end}}
{{if .Overlays}}<section id="overlays"><h2>All runs</h2>
{{range .Overlays}}{{template "figure" .}}
{{end}}</section>{{end}}
{{range .Runs}}
<section>
<h2>{{.Heading}} — <span class="status-{{.Status}}">{{.Status}}</span></h2>
<p>Run folder <code>{{.Run.Dir}}</code>{{with .Run.Result.Error}}: {{.}}{{end}}</p>
{{if .Warnings}}<div class="warnings"><b>Warnings</b><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul></div>
{{else}}<p class="nowarn">No warnings: repetitions agree, no errors, start skew and timer overhead small.</p>{{end}}
<h3>Summary</h3>
<table>
<tr><th>op</th><th>count</th><th>errors (unexpected)</th>{{if .Expected}}<th>expected failures</th>{{end}}<th>ops/s</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th><th>p50 across reps</th><th>ops/s across reps</th></tr>
{{$exp := .Expected}}{{range .Rows}}<tr><td>{{.Kind}}</td><td class="n">{{.Stats.Count}}</td><td class="n">{{.Stats.Errors}}</td>{{if $exp}}<td class="n">{{expected .Kind .Stats}}</td>{{end}}<td class="n">{{rate .Stats.OpsPerSec}}</td><td class="n">{{ns .Stats.NS.P50}}</td><td class="n">{{ns .Stats.NS.P90}}</td><td class="n">{{ns .Stats.NS.P99}}</td><td class="n">{{ns .Stats.NS.P999}}</td><td class="n">{{ns .Stats.NS.Max}}</td><td class="n">{{nsf .Stats.NS.Mean}}</td><td class="n">{{reps .P50Rep}}</td><td class="n">{{reps .OpsRep}}</td></tr>
{{end}}</table>
<p>“across reps”: median over the {{plural .RepsCount "repetition"}} ± median absolute deviation as a share of it.{{if .Open}} The latencies are service times; the response times are in the open loop's table.{{end}}</p>
{{with .Open}}<h3>Open loop: response and service times</h3>
<p>{{.Arrival}} arrivals, {{.Requested}} requested, {{.Achieved}} achieved{{if .Saturated}}, <b class="status-failed">saturated</b>{{end}}; {{.Schedule}}.</p>
<table>
<tr><th>op</th><th>time</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>
{{range .Rows}}<tr><td>{{.Kind}}</td><td>{{.What}}</td><td class="n">{{ns .Lat.P50}}</td><td class="n">{{ns .Lat.P90}}</td><td class="n">{{ns .Lat.P99}}</td><td class="n">{{ns .Lat.P999}}</td><td class="n">{{ns .Lat.Max}}</td><td class="n">{{nsf .Lat.Mean}}</td></tr>
{{end}}</table>
<p>{{responseNote}}</p>{{end}}
{{with .Storm}}<h3>Storm: makespan, critical path and each rank's time</h3>
<table>
<tr>{{range .RepHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Reps}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Ranks}}<p>{{.RankIntro}}</p>
<table>
<tr>{{range .RankHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Ranks}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}{{end}}
{{with .Firmware}}<h3>Firmware</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .RepRows}}<h3>Repetitions</h3>
<table>
<tr><th>op</th><th>metric</th><th>median</th><th>MAD</th><th>per repetition</th><th>outliers (1.5 IQR)</th></tr>
{{range .RepRows}}<tr><td>{{.Kind}}</td><td>{{.Metric}}</td><td class="n">{{.Median}}</td><td class="n">{{.MAD}}</td><td>{{.Values}}</td><td>{{.Outliers}}</td></tr>
{{end}}</table>{{end}}
<div class="cols">
<div><h3>Environment</h3><table>{{range .Env}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table></div>
<div><h3>Bill of materials</h3>{{if .BOM}}<table>{{range .BOM}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table>{{else}}<p>Not recorded: the result predates it.</p>{{end}}</div>
<div><h3>Configuration</h3><table>{{range .Config}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table></div>
<div><h3>Harness</h3><table>{{range .Harness}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table></div>
</div>
<h3>Command line</h3>
<pre>{{.Command}}</pre>
{{with .Spec}}<details><summary>Workload spec</summary><pre>{{.}}</pre></details>{{end}}
<h3>Plots</h3>
{{range .Figures}}{{template "figure" .}}
{{end}}</section>
{{end}}
</body>
</html>
`))

// renderHTML renders report.html.
func renderHTML(p htmlPage) ([]byte, error) {
	var b bytes.Buffer
	if err := page.Execute(&b, p); err != nil {
		return nil, err
	}
	// html/template leaves control characters as they are: harmless to
	// a browser, not to a terminal the page is cat or grep'd on.
	return []byte(safetext.Text(b.String())), nil
}

// timerOverhead says what one timer read costs, with the spread of the
// worker threads' measurements when they took them.
func timerOverhead(h results.Harness) string {
	t := h.TimerOverhead
	if t == nil {
		return fmt.Sprintf("%.1fns", h.TimerOverheadNS)
	}
	return fmt.Sprintf("%.1fns (median of %d measurements in the worker threads, %.1f-%.1fns; before the runs %.1fns, after %.1fns)",
		t.MedianNS, t.Samples, t.MinNS, t.MaxNS, t.BeforeNS, t.AfterNS)
}

// coverageRows show how much of the threads' working time was timed, and
// the longest stretches that were not (where a stall leaves no latency).
func coverageRows(h results.Harness) []kv {
	var rows []kv
	if c := h.Coverage; c != nil {
		var by []string
		for _, kind := range results.OpKinds {
			if v, ok := c.ByKind[kind]; ok {
				by = append(by, fmt.Sprintf("%s %.1f%%", kind, 100*v))
			}
		}
		rows = append(rows, kv{"coverage (timed share of the threads' working time)",
			fmt.Sprintf("%.1f%% (least covered thread %.1f%%): %s", 100*c.Share, 100*c.MinThreadShare, strings.Join(by, ", "))})
	}
	if w := h.Waits; w != nil {
		rows = append(rows, kv{"waits (share of the threads' working time)", waitsText(w)})
	}
	if g := h.MaxGap; g != nil {
		var by []string
		for _, kind := range results.OpKinds {
			if v, ok := h.MaxGapNS[kind]; ok {
				by = append(by, fmt.Sprintf("before %s %s", kind, units.FormatNS(float64(v))))
			}
		}
		rows = append(rows, kv{"longest untimed gap",
			fmt.Sprintf("%s before a %s batch (thread %d, repetition %d, %s after its start); %s", units.FormatNS(float64(g.NS)), g.Kind, g.Thread, g.Repetition+1, units.FormatNS(float64(g.AtNS)), strings.Join(by, ", "))})
	}
	return rows
}

func formatKiB(kb int64) string {
	if kb >= 1024 {
		return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
	}
	return fmt.Sprintf("%d KiB", kb)
}
