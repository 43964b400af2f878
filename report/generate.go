package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xrcbench/xrcbench/results"
)

// Output names in a report folder.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "summary.md"
	BenchFile    = "bench.txt"
	PlotsDir     = "plots"
)

// Report is what Generate wrote.
type Report struct {
	Out   string
	Files []string // paths written, report.html last
	// Warnings of every run, prefixed with the run's label when there are
	// several, for the CLI to echo.
	Warnings []string
}

// Options tune a report.
type Options struct {
	// Counts is the count axis of the latency histograms (default auto).
	Counts CountScale
}

// Generate writes the report of dirs into out with the default options;
// see GenerateWith.
func Generate(dirs []string, out string) (*Report, error) {
	return GenerateWith(dirs, out, Options{})
}

// GenerateWith writes the report of dirs into out: report.html, summary.md,
// bench.txt and plots/. One run folder reports into itself when out is
// empty; several run folders (a combined report with overlaid spectra) need
// out. A sweep folder (one holding sweep.json) is reported alone.
//
// Everything is computed in memory before the first file is written, and
// each file is written atomically, so bad input leaves nothing behind and a
// reader never sees half a file.
func GenerateWith(dirs []string, out string, opts Options) (*Report, error) {
	if opts.Counts == "" {
		opts.Counts = CountsAuto
	}
	if _, err := ParseCountScale(string(opts.Counts)); err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, inputErrorf("no run folder given")
	}
	var (
		runs     []*Run
		sweep    *SweepReport
		overlays []Figure
		perRun   = map[*Run][]Figure{}
		// Each run's op kinds on one axis, shown under its headline.
		kindOverlays = map[*Run][]Figure{}
		title        string
	)
	for _, d := range dirs {
		if IsSweep(d) {
			if len(dirs) > 1 {
				return nil, inputErrorf("%s is a sweep folder: report it alone", d)
			}
			sr, err := LoadSweep(d)
			if err != nil {
				return nil, err
			}
			sweep, runs = sr, sr.Runs
			continue
		}
		run, err := LoadRun(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	switch {
	case out != "":
	case len(dirs) == 1:
		out = dirs[0]
	default:
		return nil, inputErrorf("%d run folders: say where the combined report goes with --out DIR", len(dirs))
	}
	switch {
	case sweep != nil:
		figs, err := SweepFigures(sweep)
		if err != nil {
			return nil, err
		}
		overlays = figs
		title = fmt.Sprintf("xrcbench sweep: %s on %s, %s", sweep.Workload, sweep.Provider, plural(len(sweep.Points), "point"))
	case len(runs) == 1:
		figs, err := RunFigures(runs[0], "", opts.Counts)
		if err != nil {
			return nil, err
		}
		perRun[runs[0]] = figs
		if kindOverlays[runs[0]], err = KindOverlayFigures(runs[0], "", opts.Counts); err != nil {
			return nil, err
		}
		title = "xrcbench: " + Title(runs[0].Result)
	default:
		labelRuns(runs)
		for _, run := range runs {
			figs, err := RunFigures(run, fileSafe(run.Label)+"-", opts.Counts)
			if err != nil {
				return nil, err
			}
			perRun[run] = figs
			if kindOverlays[run], err = KindOverlayFigures(run, fileSafe(run.Label)+"-", opts.Counts); err != nil {
				return nil, err
			}
		}
		var err error
		if overlays, err = OverlayFigures(runs); err != nil {
			return nil, err
		}
		title = "xrcbench: " + plural(len(runs), "run")
	}

	for _, run := range runs {
		for _, f := range kindOverlays[run] {
			run.overlayPlots = append(run.overlayPlots, filepath.ToSlash(filepath.Join(PlotsDir, f.Name+".png")))
		}
	}
	pg := htmlPage{Title: title, Single: len(runs) == 1 && sweep == nil}
	if sweep != nil {
		pg.Sweep = &htmlSweep{SweepReport: sweep, Figures: htmlFigures(overlays)}
		pg.Headlines = []htmlHeadline{{Kinds: SweepHeadline(sweep)}}
	} else {
		pg.Overlays = htmlFigures(overlays)
		for _, run := range runs {
			pg.Headlines = append(pg.Headlines, newHTMLHeadline(run, len(runs) > 1, kindOverlays[run]))
		}
	}
	for _, run := range runs {
		if IsTestDouble(run.Result) {
			pg.TestDoubleRuns = append(pg.TestDoubleRuns, run.Label)
		}
	}
	pg.TestDouble = len(pg.TestDoubleRuns) > 0
	if len(runs) == 1 {
		pg.TestDoubleRuns = nil // the page is the run
	}
	rep := &Report{Out: out}
	for _, run := range runs {
		pg.Runs = append(pg.Runs, newHTMLRun(run, perRun[run], !pg.Single))
		for _, w := range Warnings(run) {
			if len(runs) > 1 {
				w = run.Label + ": " + w
			}
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	html, err := renderHTML(pg)
	if err != nil {
		return nil, err
	}
	var md, bench bytes.Buffer
	if sweep != nil {
		writeSweepMarkdown(&md, sweep, pg.TestDouble)
	}
	if err := WriteMarkdown(&md, runs); err != nil {
		return nil, err
	}
	if err := WriteBench(&bench, runs); err != nil {
		return nil, err
	}

	files := map[string][]byte{}
	var order []string
	put := func(name string, data []byte) {
		files[name] = data
		order = append(order, name)
	}
	for _, figs := range append(append(collect(runs, kindOverlays), collect(runs, perRun)...), overlays) {
		for _, f := range figs {
			put(filepath.Join(PlotsDir, f.Name+".svg"), f.SVG)
			put(filepath.Join(PlotsDir, f.Name+".png"), f.PNG)
		}
	}
	put(MarkdownFile, md.Bytes())
	put(BenchFile, bench.Bytes())
	put(HTMLFile, html) // last: its presence means the report is complete
	if err := os.MkdirAll(filepath.Join(out, PlotsDir), 0o755); err != nil {
		return nil, err
	}
	for _, name := range order {
		path := filepath.Join(out, name)
		if err := results.WriteFileAtomic(path, files[name], 0o644); err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, path)
	}
	if sweep == nil && len(runs) == 1 && sameFolder(out, runs[0].Dir) {
		// Into the run's own folder: say what is ours, so a later run into
		// the folder removes these and nothing the user put beside them.
		if err := RecordFiles(out, runs[0].Result.RunID, order); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// RecordFiles adds names (relative to the run folder dir) to the files
// written there for the run runID besides the run's own
// (results.ReportManifest), so that a later run into the folder removes
// them too, and nothing else. Runs without a run id (older versions) have
// no record.
func RecordFiles(dir, runID string, names []string) error {
	if runID == "" {
		return nil
	}
	all := slices.Clone(names)
	if m, err := results.LoadManifest(dir); err == nil && m.RunID == runID {
		for _, n := range m.Files {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	return results.WriteManifest(dir, runID, all)
}

// sameFolder says whether a and b are one folder.
func sameFolder(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func collect(runs []*Run, per map[*Run][]Figure) [][]Figure {
	var out [][]Figure
	for _, r := range runs {
		out = append(out, per[r])
	}
	return out
}

// fileSafe turns a run label into a file-name prefix.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// writeSweepMarkdown writes the sweep table ahead of the points' sections.
func writeSweepMarkdown(b *bytes.Buffer, sr *SweepReport, testDouble bool) {
	fmt.Fprintf(b, "# xrcbench sweep: %s on %s\n\n", mdText(sr.Workload), mdText(sr.Provider))
	if testDouble {
		fmt.Fprintf(b, "> **Not hardware.** %s\n\n", TestDoubleBanner)
	}
	b.WriteString("**Headline**\n\n")
	for _, s := range SweepHeadline(sr) {
		fmt.Fprintf(b, "- %s\n", mdText(s))
	}
	fmt.Fprintf(b, "\nFolder %s, %s.\n\n", mdCode(sr.Dir), plural(len(sr.Points), "point"))
	b.WriteString("| point | procs | threads | QPs | status |")
	for _, k := range sr.Kinds {
		fmt.Fprintf(b, " %s ops/s | %s p99 |", mdText(k), mdText(k))
	}
	b.WriteString("\n|---|---:|---:|---:|---|" + strings.Repeat("---:|---:|", len(sr.Kinds)) + "\n")
	for _, p := range sr.Points {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s |", mdText(p.Dir), p.Procs, p.Threads, p.QPs, mdText(p.Status))
		for _, c := range p.Cells {
			fmt.Fprintf(b, " %s | %s |", c.Rate, c.P99)
		}
		b.WriteString("\n")
	}
	for _, n := range sr.Notes {
		fmt.Fprintf(b, "\n- %s\n", mdText(n))
	}
	b.WriteString("\n")
}
