package main

import (
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/xrcbench/xrcbench/qualify"
	"github.com/xrcbench/xrcbench/results"
)

// What --json prints on stdout: one JSON document per command, its
// summary, for scripts (as hyperfine --export-json - and fio
// --output-format=json give); progress, warnings and errors stay on
// stderr. Figures keep result.json's names (results.OpStats).

// runJSON is run's document.
type runJSON struct {
	Command string `json:"command"` // "run"
	// Status is result.json's (ok, partial, failed); failed also when the
	// run ended before it had a result.
	Status string `json:"status"`
	Folder string `json:"folder"`
	// Written says whether Folder holds this run's result.json: false
	// when the run could not be written there (the error says why).
	Written  bool                       `json:"written"`
	Error    string                     `json:"error,omitempty"`
	Warnings []results.Warning          `json:"warnings,omitempty"`
	Ops      map[string]results.OpStats `json:"ops"`
	Storm    *results.Storm             `json:"storm,omitempty"`
	Leaks    *results.LeakCheck         `json:"leaks,omitempty"`
}

// newRunJSON is the document of a run into folder: res as bench.Run
// returned it (nil when it had none) and the command's error.
func newRunJSON(folder string, res *results.Result, written bool, err error) runJSON {
	doc := runJSON{Command: "run", Status: results.StatusFailed, Folder: folder, Written: written && res != nil, Ops: map[string]results.OpStats{}}
	if res != nil {
		doc.Status, doc.Warnings, doc.Storm, doc.Leaks = res.Status, res.Warnings, res.Storm, res.Leaks
		for kind, s := range res.Ops {
			doc.Ops[kind] = s
		}
	}
	if err != nil {
		doc.Error = oneLine(err.Error())
	}
	return doc
}

// sweepJSON is sweep's document: sweep.json's points, each with its
// run's figures.
type sweepJSON struct {
	Command string `json:"command"` // "sweep"
	// Status is ok when every point was, failed when any failed, partial
	// when the sweep was stopped before its last point.
	Status string           `json:"status"`
	Folder string           `json:"folder"`
	Points []sweepPointJSON `json:"points"`
	Error  string           `json:"error,omitempty"`
}

type sweepPointJSON struct {
	results.SweepPoint
	Ops map[string]results.OpStats `json:"ops"`
}

// qualifyJSON is qualify's document: the verdict and each check's.
type qualifyJSON struct {
	Command     string        `json:"command"` // "qualify"
	Status      string        `json:"status"`  // the verdict: pass, fail or inconclusive
	Summary     string        `json:"summary"`
	Folder      string        `json:"folder"`
	Conformance []qualify.Row `json:"conformance"`
	Criteria    []qualify.Row `json:"criteria"`
	Soak        []qualify.Row `json:"soak,omitempty"`
}

// historyJSON is history's document: history.json, as written.
type historyJSON struct {
	Command string `json:"command"` // "history"
	// Status is regressed when the latest run sits after a regression
	// change point (exit 1), else ok.
	Status  string          `json:"status"`
	Folder  string          `json:"folder"`
	History json.RawMessage `json:"history"`
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
	doc := sweepJSON{Command: "sweep", Status: results.StatusOK, Folder: root, Points: []sweepPointJSON{}}
	for _, p := range idx.Points {
		pt := sweepPointJSON{SweepPoint: p, Ops: map[string]results.OpStats{}}
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
	if err != nil {
		doc.Error = oneLine(err.Error())
	}
	return doc
}
