// Package results is the contract between the engine and the report: the
// types of result.json (schema v1), its atomic writing, its loading with
// validation, and the encoding of latency histograms.
//
// bench writes a run folder through this package; report reads it through
// this package and never imports bench.
//
// Its one concern is the format: it imports nothing of the project that
// measures, so everything that reads run folders (report, compare,
// history, export) builds without cgo.
package results
