// Package results is the contract between the engine and the readers of
// its run folders: the types of result.json (schema v1), its atomic
// writing, its loading with validation, the encoding of latency
// histograms, sweep.json and the manifest, and the reader of a whole run
// folder (ReadRunFolder): result.json with the HdrHistogram interval logs
// (<kind>.hlog, ReadTimeline) beside it, each held to the run's own counts
// and run id.
//
// bench writes a run folder through this package; report and analysis
// read it through this package and never import bench. Every error about
// an input folder wraps ErrInput.
//
// Its one concern is the format: it imports nothing of the project that
// measures, so everything that reads run folders (report, compare,
// history, export, the fleet report) builds without cgo.
package results
