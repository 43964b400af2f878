// Package analysis is what xrcbench concludes from many run folders at
// once, on top of the statistics (stats) and the drawing (report): the
// fleet report (LoadFleet, GenerateFleet), which sets a fleet's nodes side
// by side, scores each against its firmware's peers (a robust z-score of
// the log figures) and tests its repetitions against theirs (the U test,
// Holm over every test), and flags the nodes that depart from the rest.
//
// It reads run folders only through results and draws its page with
// report's primitives (figures, the page head, the figure template), so it
// builds without cgo and never runs a benchmark. Errors about the input
// wrap results.ErrInput (report.ErrInput is the same error).
package analysis
