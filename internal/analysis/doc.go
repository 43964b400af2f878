// Package analysis is what xrcbench concludes from many run folders at
// once, on top of the statistics (stats) and the drawing (report):
//
//   - the fleet report (LoadFleet, GenerateFleet) sets a fleet's nodes side
//     by side, scores each against its firmware's peers (a robust z-score
//     of the log figures), tests its repetitions against theirs (the U
//     test, Holm over every test) and flags the nodes that depart;
//   - the history (BuildHistory) follows each gated metric over runs and
//     finds its steps and drifts (stats/changepoint), naming the runs
//     after which it regressed.
//
// The fleet and the history are its own types, so their pages (fleet.html,
// history.html) are drawn here with report's primitives (figures, the page
// head, the figure template) rather than report knowing them. It reads run
// folders only through results, builds without cgo, and never runs a
// benchmark. Errors about the input wrap results.ErrInput.
package analysis
