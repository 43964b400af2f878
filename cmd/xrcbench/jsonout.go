package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"

	"github.com/xrcbench/xrcbench/internal/calibrate"
	"github.com/xrcbench/xrcbench/internal/conform"
	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// jsonBeforeStart gives a command that ended before it had anything to
// show (a provider not available, a folder that cannot be made) its
// document, when --json asked for one: doc is the command's document of
// that failure. Bad usage (exit 2) gets none.
func jsonBeforeStart(w io.Writer, asJSON bool, doc func() any, err error) error {
	if !asJSON || err == nil || errors.As(err, new(usageError)) {
		return err
	}
	return cmp.Or(err, writeJSON(w, doc()))
}

// What --json prints on stdout: one JSON document per command, its
// summary, for scripts (as hyperfine --export-json - and fio
// --output-format=json give); progress, warnings and errors stay on
// stderr. Figures keep result.json's names (results.OpStats). Every
// document starts with the same envelope, and one is printed for every
// exit status but 2 (bad usage, which is said on stderr alone).

// jsonSchema names the documents' format and its version: a key is only
// ever added under it; a change of meaning gets a new version.
const jsonSchema = "xrcbench.json/v1"

// envelope is what every document has: which format, which command, its
// outcome, the folder it wrote (if any) and the error that ended it.
type envelope struct {
	Schema  string `json:"schema"`
	Command string `json:"command"`
	// Status: run's is result.json's (ok, partial, failed), sweep's ok,
	// partial or failed, qualify's its verdict, history's ok or
	// regressed, devices' ok or failed; failed also when the command
	// ended before it had anything to show.
	Status string `json:"status"`
	Folder string `json:"folder,omitempty"`
	Error  string `json:"error,omitempty"`
}

func newEnvelope(command, status, folder string, err error) envelope {
	e := envelope{Schema: jsonSchema, Command: command, Status: status, Folder: folder}
	if err != nil {
		e.Error = oneLine(err.Error())
	}
	return e
}

// runJSON is run's document.
type runJSON struct {
	envelope
	// Written says whether Folder holds this run's result.json: false
	// when the run could not be written there (the error says why).
	Written  bool                       `json:"written"`
	RunID    string                     `json:"run_id,omitempty"`
	Config   *results.Config            `json:"config,omitempty"`
	Labels   map[string]string          `json:"labels,omitempty"`
	Warnings []results.Warning          `json:"warnings,omitempty"`
	Ops      map[string]results.OpStats `json:"ops"`
	Storm    *results.Storm             `json:"storm,omitempty"`
	Leaks    *results.LeakCheck         `json:"leaks,omitempty"`
}

// newRunJSON is the document of a run into folder: res as bench.Run
// returned it (nil when it had none) and the command's error.
func newRunJSON(folder string, res *results.Result, written bool, err error) runJSON {
	doc := runJSON{envelope: newEnvelope("run", results.StatusFailed, folder, err), Written: written && res != nil, Ops: map[string]results.OpStats{}}
	if res != nil {
		doc.Status, doc.Warnings, doc.Storm, doc.Leaks = res.Status, res.Warnings, res.Storm, res.Leaks
		doc.RunID, doc.Config, doc.Labels = res.RunID, &res.Config, res.Labels
		for kind, s := range res.Ops {
			doc.Ops[kind] = s
		}
	}
	return doc
}

// sweepJSON is sweep's document: sweep.json's points, each with its
// run's figures.
type sweepJSON struct {
	envelope                  // Status: ok when every point was, failed when any failed, partial when stopped before its last point
	Points   []sweepPointJSON `json:"points"`
}

// sweepPointJSON is a point of sweep.json, its folder named as the
// envelope names one (the path, not sweep.json's dir relative to it).
type sweepPointJSON struct {
	results.SweepPoint
	Dir    string                     `json:"-"`
	Folder string                     `json:"folder"`
	Ops    map[string]results.OpStats `json:"ops"`
}

// qualifyJSON is qualify's document: the verdict and each check's.
type qualifyJSON struct {
	envelope                  // Status: the verdict, pass, fail or inconclusive
	Summary     string        `json:"summary"`
	Headline    string        `json:"headline"` // the verdict in one short line
	Conformance []qualify.Row `json:"conformance"`
	Criteria    []qualify.Row `json:"criteria"`
	Soak        []qualify.Row `json:"soak,omitempty"`
}

// historyJSON is history's document: history.json, as written.
type historyJSON struct {
	envelope                 // Status: regressed when the latest run sits after a regression change point (exit 1), else ok
	History  json.RawMessage `json:"history"`
}

// conformJSON is conform's document: its report (Status pass or fail).
type conformJSON struct {
	envelope
	conform.ConformReport
}

// calibrateJSON is calibrate's document (Status ok, or missed when a
// target was).
type calibrateJSON struct {
	envelope
	Measurements []calibrate.Measurement `json:"measurements"`
	Missed       int                     `json:"missed"`
	Busy         int                     `json:"busy"`
}

// devicesJSON is devices' document: every device libibverbs lists.
type devicesJSON struct {
	envelope
	Devices []verbs.DeviceInfo `json:"devices"`
}

// writeJSON writes doc, indented, as the command's one document.
func writeJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return outputErr(enc.Encode(doc))
}

// newSweepJSON is the document of the sweep in root, its points' figures
// read back from their result.json; err is the sweep's, stopped whether it
// ended before its last point.
func newSweepJSON(root string, idx *results.Sweep, err error, stopped bool) sweepJSON {
	doc := sweepJSON{envelope: newEnvelope("sweep", results.StatusOK, root, err), Points: []sweepPointJSON{}}
	for _, p := range idx.Points {
		pt := sweepPointJSON{SweepPoint: p, Folder: filepath.Join(root, p.Dir), Ops: map[string]results.OpStats{}}
		if r, lerr := results.Load(filepath.Join(root, p.Dir)); lerr == nil {
			pt.Ops = r.Ops
		}
		if p.Status != results.StatusOK {
			doc.Status = results.StatusFailed
		}
		doc.Points = append(doc.Points, pt)
	}
	if stopped && doc.Status == results.StatusOK {
		doc.Status = results.StatusPartial
	}
	return doc
}
