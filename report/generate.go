package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// Output names in a report folder.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "summary.md"
	benchFile    = "bench.txt"
	plotsDir     = "plots"
)

// Report is what Generate wrote.
type Report struct {
	Out   string
	Files []string // paths written, report.html last
	// Warnings and Notices of every run, prefixed with the run's label
	// when there are several, for the CLI to echo: one terminal line each
	// (the full text is in summary.md and report.html).
	Warnings []string
	Notices  []string
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
		opts.Counts = countsAuto
	}
	if _, err := ParseCountScale(string(opts.Counts)); err != nil {
		return nil, err
	}
	in, err := loadInputs(dirs)
	if err != nil {
		return nil, err
	}
	if out, err = reportFolder(dirs, out); err != nil {
		return nil, err
	}
	figs, err := makeFigures(in, opts.Counts)
	if err != nil {
		return nil, err
	}
	pg, warnings, notices := makePage(in, figs)
	files, err := renderFiles(in, figs, pg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Out: out, Warnings: warnings, Notices: notices}
	if err := writeFiles(rep, in, files); err != nil {
		return nil, err
	}
	return rep, nil
}

// The parts of GenerateWith, in the way benchstat keeps reading, computing
// and formatting apart: loadInputs reads the folders, makeFigures draws,
// makePage lays out report.html, renderFiles formats every file, and
// writeFiles alone touches the output folder.

// inputs is what a report is made of: the runs, and the sweep they belong
// to when the folder given was one.
type inputs struct {
	runs  []*Run
	sweep *sweepReport
}

// loadInputs reads dirs: run folders, or one sweep folder alone.
func loadInputs(dirs []string) (inputs, error) {
	var in inputs
	if len(dirs) == 0 {
		return in, inputErrorf("no run folder given")
	}
	for _, d := range dirs {
		if isSweep(d) {
			if len(dirs) > 1 {
				return in, inputErrorf("%s is a sweep folder: report it alone", d)
			}
			sr, err := loadSweep(d)
			if err != nil {
				return in, err
			}
			in.sweep, in.runs = sr, sr.Runs
			continue
		}
		run, err := LoadRun(d)
		if err != nil {
			return in, replacedWhileRead(d, err)
		}
		in.runs = append(in.runs, run)
	}
	return in, nil
}

// replacedWhileRead is err, or, when err is a log of another run than the
// result.json read before it and the folder's result.json now names
// another run, that the folder's run was replaced while it was read: a
// run into the folder committed between the two reads. Reporting it again
// reads the new run whole.
func replacedWhileRead(dir string, err error) error {
	var mixed *results.MixedLogError
	if !errors.As(err, &mixed) {
		return err
	}
	if now, lerr := results.Load(dir); lerr == nil && now.RunID != mixed.ResultRunID {
		return inputErrorf("report folder %s: the run in it was replaced while the report was made: report it again", dir)
	}
	return err
}

// reportFolder is where the report goes: out, or the one folder given.
func reportFolder(dirs []string, out string) (string, error) {
	switch {
	case out != "":
		return out, nil
	case len(dirs) == 1:
		return dirs[0], nil
	}
	return "", inputErrorf("%d run folders: say where the combined report goes with --out DIR", len(dirs))
}

// figureSet is every plot of a report, and the page's title.
type figureSet struct {
	overlays []Figure // the sweep's, or the runs' side by side
	perRun   map[*Run][]Figure
	// Each run's op kinds on one axis, shown under its headline.
	kindOverlays map[*Run][]Figure
	title        string
}

// makeFigures draws the plots. Several runs get labels first, which name
// their plot files.
func makeFigures(in inputs, counts CountScale) (figureSet, error) {
	fs := figureSet{perRun: map[*Run][]Figure{}, kindOverlays: map[*Run][]Figure{}}
	var err error
	switch runs := in.runs; {
	case in.sweep != nil:
		if fs.overlays, err = sweepFigures(in.sweep); err != nil {
			return fs, err
		}
		fs.title = fmt.Sprintf("xrcbench sweep: %s on %s, %s", in.sweep.Workload, in.sweep.Provider, units.Plural(len(in.sweep.Points), "point"))
	case len(runs) == 1:
		if fs.perRun[runs[0]], err = runFigures(runs[0], "", counts); err != nil {
			return fs, err
		}
		if fs.kindOverlays[runs[0]], err = kindOverlayFigures(runs[0], "", counts); err != nil {
			return fs, err
		}
		fs.title = "xrcbench: " + title(runs[0].Result)
	default:
		LabelRuns(runs)
		for _, run := range runs {
			if fs.perRun[run], err = runFigures(run, results.SafeFileName(run.Label)+"-", counts); err != nil {
				return fs, err
			}
			if fs.kindOverlays[run], err = kindOverlayFigures(run, results.SafeFileName(run.Label)+"-", counts); err != nil {
				return fs, err
			}
		}
		if fs.overlays, err = overlayFigures(runs); err != nil {
			return fs, err
		}
		fs.title = "xrcbench: " + units.Plural(len(runs), "run")
	}
	for _, run := range in.runs {
		for _, f := range fs.kindOverlays[run] {
			run.overlayPlots = append(run.overlayPlots, filepath.ToSlash(filepath.Join(plotsDir, f.Name+".png")))
		}
	}
	return fs, nil
}

// makePage lays out report.html, and gathers what the CLI says of the
// runs: their warnings and their notices (each prefixed with its run's
// label when there are several).
func makePage(in inputs, fs figureSet) (htmlPage, []string, []string) {
	runs, sweep := in.runs, in.sweep
	pg := htmlPage{Title: fs.title, Single: len(runs) == 1 && sweep == nil}
	if sweep != nil {
		pg.Sweep = &htmlSweep{sweepReport: sweep, Figures: htmlFigures(fs.overlays)}
		pg.Headlines = []htmlHeadline{{Kinds: sweepHeadline(sweep)}}
	} else {
		pg.Overlays = htmlFigures(fs.overlays)
		for _, run := range runs {
			pg.Headlines = append(pg.Headlines, newHTMLHeadline(run, len(runs) > 1, fs.kindOverlays[run]))
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
	var said, notices []string
	for _, run := range runs {
		pg.Runs = append(pg.Runs, newHTMLRun(run, fs.perRun[run], !pg.Single))
		prefix := ""
		if len(runs) > 1 {
			prefix = run.Label + ": "
		}
		own, ns := stderrLines(run, prefix)
		notices = append(notices, ns...)
		n := 0
		for _, w := range run.Result.Warnings {
			if w.Severity != results.SeverityNotice {
				n++
			}
		}
		if n > 0 {
			own = append(own, prefix+fmt.Sprintf("the run's own %s (said when it ran) are in %s and %s", units.Plural(n, "warning"), MarkdownFile, HTMLFile))
		}
		said = append(said, own...)
	}
	return pg, said, notices
}

// reportFile is one file of a report, by its name in the report folder.
type reportFile struct {
	name string
	data []byte
}

// renderFiles formats every file of the report, in the order they are
// written: the plots, summary.md, bench.txt, and report.html last, whose
// presence means the report is complete.
func renderFiles(in inputs, fs figureSet, pg htmlPage) ([]reportFile, error) {
	html, err := renderHTML(pg)
	if err != nil {
		return nil, err
	}
	summaries, err := renderSummaries(in, pg.TestDouble)
	if err != nil {
		return nil, err
	}
	var files []reportFile
	for _, figs := range append(append(collect(in.runs, fs.kindOverlays), collect(in.runs, fs.perRun)...), fs.overlays) {
		for _, f := range figs {
			files = append(files, reportFile{filepath.Join(plotsDir, f.Name+".svg"), f.SVG},
				reportFile{filepath.Join(plotsDir, f.Name+".png"), f.PNG})
		}
	}
	return append(append(files, summaries...), reportFile{HTMLFile, html}), nil
}

// renderSummaries formats summary.md and bench.txt, the text files of a
// report and all that `run` writes beside its result (WriteSummaries).
func renderSummaries(in inputs, testDouble bool) ([]reportFile, error) {
	var md, bench bytes.Buffer
	if in.sweep != nil {
		writeSweepMarkdown(&md, in.sweep, testDouble)
	}
	if err := WriteMarkdown(&md, in.runs); err != nil {
		return nil, err
	}
	if err := writeBench(&bench, in.runs); err != nil {
		return nil, err
	}
	return []reportFile{{MarkdownFile, md.Bytes()}, {benchFile, bench.Bytes()}}, nil
}

// WriteSummaries writes summary.md and bench.txt into the run folder dir,
// as a full report (GenerateWith) has them, without report.html and the
// plots: what `xrcbench run` leaves beside result.json. They are recorded
// as the run's own, so a later run into the folder removes them.
func WriteSummaries(dir string) error {
	run, err := LoadRun(dir)
	if err != nil {
		return fmt.Errorf("%s and %s not written: %w", MarkdownFile, benchFile, err)
	}
	in := inputs{runs: []*Run{run}}
	files, err := renderSummaries(in, false)
	if err != nil {
		return err
	}
	return writeFiles(&Report{Out: dir}, in, files)
}

// writeFiles writes the files into rep.Out, each atomically, and records
// them in rep.Files; into a run's own folder it also records them in the
// run's result, so a later run into the folder removes these and nothing
// the user put beside them.
//
// Every file is written beneath a handle of rep.Out (internal/safedir):
// a symbolic link inside it (plots -> /etc, planted by whoever else can
// write a shared run folder) is refused, never written through, and so
// never recorded for a later run to remove. The folder's lock, a run's
// (.<name>.lock), is held meanwhile: a run putting itself in place swaps
// the folder out, and what a report wrote into the handle of the folder
// swapped out stayed there, another run's report in the new run's
// folder, for good.
func writeFiles(rep *Report, in inputs, files []reportFile) error {
	out, unlock, err := safedir.OpenLocked(rep.Out)
	var busy *safedir.BusyError
	if errors.As(err, &busy) {
		return inputErrorf("report folder %s: a run (or another report) is writing it, xrcbench pid %s: report it once that is done", rep.Out, busy.Holder)
	}
	if err != nil {
		return inputErrorf("report folder %v: write the report elsewhere (--out)", err)
	}
	defer unlock()
	own := in.sweep == nil && len(in.runs) == 1 && sameFolder(out, in.runs[0].Dir)
	if own {
		// The run was read before the lock was taken: a run into the
		// folder may have replaced it since.
		if r, err := results.Load(rep.Out); err != nil || r.RunID != in.runs[0].Result.RunID {
			return inputErrorf("report folder %s: the run in it was replaced while the report was made: report it again", rep.Out)
		}
	}
	// The plots folder is a full report's (report.html links it, even
	// with no plot in it); the summaries alone have none.
	if slices.ContainsFunc(files, func(f reportFile) bool { return f.name == HTMLFile }) {
		plots, err := out.MkdirAll(plotsDir, 0o755)
		if err != nil {
			return inputErrorf("report folder %s: %v: write the report elsewhere (--out)", rep.Out, err)
		}
		plots.Close()
	}
	var names []string
	for _, f := range files {
		path := filepath.Join(rep.Out, f.name)
		if err := out.WriteFile(f.name, f.data, 0o644); err != nil {
			return err
		}
		rep.Files = append(rep.Files, path)
		names = append(names, f.name)
	}
	if own {
		return recordFiles(out, in.runs[0].Result.RunID, names)
	}
	return nil
}

// recordFiles adds names (relative to the run folder dir) to the files
// written there for the run runID besides the run's own
// (results.ReportManifest), so that a later run into the folder removes
// them too, and nothing else. Runs without a run id (older versions) have
// no record.
func recordFiles(dir *safedir.Dir, runID string, names []string) error {
	if runID == "" {
		return nil
	}
	all := slices.Clone(names)
	if m, err := results.LoadManifest(dir.Path()); err == nil && m.RunID == runID {
		for _, n := range m.Files {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	return results.WriteManifestIn(dir, runID, all)
}

// sameFolder says whether the open folder d is the folder at path.
func sameFolder(d *safedir.Dir, path string) bool {
	own, err1 := d.Stat()
	var at unix.Stat_t
	err2 := unix.Stat(path, &at)
	return err1 == nil && err2 == nil && own.Dev == at.Dev && own.Ino == at.Ino
}

func collect(runs []*Run, per map[*Run][]Figure) [][]Figure {
	var out [][]Figure
	for _, r := range runs {
		out = append(out, per[r])
	}
	return out
}

// writeSweepMarkdown writes the sweep table ahead of the points' sections.
func writeSweepMarkdown(b *bytes.Buffer, sr *sweepReport, testDouble bool) {
	fmt.Fprintf(b, "# xrcbench sweep: %s on %s\n\n", mdText(sr.Workload), mdText(sr.Provider))
	if testDouble {
		fmt.Fprintf(b, "> **Not hardware.** %s\n\n", TestDoubleBanner)
	}
	b.WriteString("**Headline**\n\n")
	for _, s := range sweepHeadline(sr) {
		fmt.Fprintf(b, "- %s\n", mdText(s))
	}
	fmt.Fprintf(b, "\nFolder %s, %s.\n\n", mdCode(sr.Dir), units.Plural(len(sr.Points), "point"))
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
	var models []string
	for _, p := range sr.Points {
		if p.SimCost != "" && !slices.Contains(models, p.SimCost) {
			models = append(models, p.SimCost)
		}
	}
	if len(models) > 0 {
		b.WriteString("\nThe sweep varies the sim's cost model; a point's folder ends in its number:")
		for i, m := range models {
			fmt.Fprintf(b, " c%d %s", i+1, mdCode(m))
		}
		b.WriteString(".\n")
	}
	for _, n := range sr.Notes {
		fmt.Fprintf(b, "\n- %s\n", mdText(n))
	}
	b.WriteString("\n")
}
