// Package stats is xrcbench's statistics, apart from what they are
// computed on and how they are shown: the one median of the tree, the
// median absolute deviation and Tukey's fences, the Mann-Whitney U test
// and the least repetitions with which it can decide anything, Holm's
// adjustment for many gates, and the median's distribution-free
// confidence interval. Its subpackage changepoint finds steps and drifts
// in a series of results.
//
// It knows nothing of run folders or metrics (report and analysis give it
// plain numbers), so it imports nothing of the project: any package may
// use it, the calibration in verbs and bench included, and every number
// that is called a median in a report, a fleet, a history or a
// calibration is computed by Median here.
//
// The median's interval is golang.org/x/perf/benchmath's (distribution-
// free: benchmath.AssumeNothing), as benchstat computes it. The U test is
// its own: exact with ties, which benchmath's is not (see UTest).
package stats
