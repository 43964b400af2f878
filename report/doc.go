// Package report turns xrcbench run folders into something people and CI
// jobs read: the metrics of a run across its repetitions and what its
// reader must be warned of, plots (gonum/plot, PNG and SVG), a
// self-contained report.html, a summary.md for job summaries and PR
// comments, a bench.txt in the Go benchmark format that benchstat reads,
// the comparison of two run folders (and of N sets of them) behind
// `xrcbench compare`, exports for dashboards, and JUnit XML.
//
// It is the rendering half: the statistics it shows are computed by
// package stats (one median, the U test, Holm, intervals), and the
// analyses of many folders (the fleet, the history) are package
// analysis, which draws its pages with the primitives exported here
// (Figure, Stamp, LatencyHistogram, RenderSized, PageHead, FigureTemplate,
// TemplateFuncs).
//
// It reads run folders only through the results package
// (results.ReadRunFolder: result.json, sweep.json, the <kind>.hlog
// interval logs beside them); it never runs a benchmark. Every number it
// prints is computed from those files.
//
// Problems that do not stop the work (a missing interval log, high variation
// across repetitions, errors counted by the engine) become warnings in the
// report; problems with the input itself (a missing or truncated
// result.json, another schema) are errors that wrap results.ErrInput.
package report
