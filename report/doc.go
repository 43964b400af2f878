// Package report turns xrcbench run folders into something people and CI
// jobs read: statistics across repetitions, plots (gonum/plot, PNG and SVG),
// a self-contained report.html, a summary.md for job summaries and PR
// comments, a bench.txt in the Go benchmark format that benchstat reads, and
// the comparison of two run folders behind `xrcbench compare`.
//
// It reads run folders only through the results package (result.json,
// sweep.json) and the HdrHistogram interval logs (<kind>.hlog) beside them;
// it never runs a benchmark. Every number it prints is computed from those
// files.
//
// Problems that do not stop the work (a missing interval log, high variation
// across repetitions, errors counted by the engine) become warnings in the
// report; problems with the input itself (a missing or truncated
// result.json, another schema) are errors that wrap ErrInput.
package report
