package results

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/internal/safedir"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a half-written file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Write writes r as dir/result.json, atomically.
func Write(dir string, r *Result) error {
	data, err := encode(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, FileName), data, 0o644)
}

// WriteIn writes r as result.json beneath the folder's handle, atomically
// and never through a link (safedir.Dir.WriteFile): how a run writes it.
func WriteIn(dir *safedir.Dir, r *Result) error {
	data, err := encode(r)
	if err != nil {
		return err
	}
	return dir.WriteFile(FileName, data, 0o644)
}

func encode(r *Result) ([]byte, error) {
	if r.Schema == "" {
		r.Schema = Schema
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ErrInvalid is wrapped by every validation failure of Load.
var ErrInvalid = errors.New("invalid result")

// Load reads and validates a result: dir may be a run folder or the path
// of a result.json. Errors name the file.
func Load(dir string) (*Result, error) {
	path := dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		path = filepath.Join(dir, FileName)
	}
	data, err := regfile.ReadFile(path, regfile.MaxResult)
	if err != nil {
		return nil, err
	}
	var r Result
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		var probe struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(data, &probe) == nil && probe.Schema != "" && probe.Schema != Schema {
			return nil, fmt.Errorf("%s: %w: schema %q, this xrcbench reads %q", path, ErrInvalid, probe.Schema, Schema)
		}
		return nil, fmt.Errorf("%s: %w: not a complete result.json (%v)", path, ErrInvalid, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Validate checks what every reader relies on.
func (r *Result) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	if r.Schema != Schema {
		return bad("schema %q, this xrcbench reads %q", r.Schema, Schema)
	}
	switch r.Status {
	case StatusOK, StatusPartial, StatusFailed:
	default:
		return bad("status %q is not ok, partial or failed", r.Status)
	}
	if r.Status != StatusOK && r.Error == "" {
		return bad("status %q without an error", r.Status)
	}
	if r.Config.Workload == "" || r.Config.Provider == "" {
		return bad("config lacks workload or provider")
	}
	if r.Config.Procs <= 0 || r.Config.Threads <= 0 {
		return bad("config has procs=%d threads=%d", r.Config.Procs, r.Config.Threads)
	}
	if err := ValidateLabels(r.Labels); err != nil {
		return bad("%v", err)
	}
	if r.Ops == nil {
		return bad("no ops")
	}
	if r.Status == StatusOK && len(r.Ops) == 0 {
		// A run that measured nothing did not succeed.
		return bad("status ok but no operation in ops")
	}
	for _, kind := range slices.Sorted(maps.Keys(r.Ops)) {
		if err := r.Ops[kind].validate(); err != nil {
			return bad("ops.%s: %v", kind, err)
		}
	}
	for i, rep := range r.Repetitions {
		for _, kind := range slices.Sorted(maps.Keys(rep.Ops)) {
			if err := rep.Ops[kind].validate(); err != nil {
				return bad("repetitions[%d].ops.%s: %v", i, kind, err)
			}
		}
	}
	if r.Storm != nil {
		if err := r.Storm.validate(); err != nil {
			return bad("storm: %v", err)
		}
	}
	return nil
}

// validate checks that a storm's figures agree with each other: a report
// draws its CDF from rank_done_ns and its makespan from makespan_ns.
func (s *Storm) validate() error {
	if s.Ranks <= 0 || s.Nodes < 2 || s.QPs < 0 {
		return fmt.Errorf("nodes %d, ranks %d, qps %d", s.Nodes, s.Ranks, s.QPs)
	}
	if len(s.RankDoneNS) != len(s.MakespanNS) {
		return fmt.Errorf("%d makespans for %d repetitions of rank times", len(s.MakespanNS), len(s.RankDoneNS))
	}
	for i, ranks := range s.RankDoneNS {
		if len(ranks) != s.Ranks {
			return fmt.Errorf("repetition %d: %d rank times for %d ranks", i, len(ranks), s.Ranks)
		}
		want := int64(0)
		for _, d := range ranks {
			if d < -1 {
				return fmt.Errorf("repetition %d: rank time %d ns", i, d)
			}
			want = max(want, d)
		}
		if slices.Contains(ranks, -1) {
			want = -1 // a rank that did not finish: no makespan
		}
		if s.MakespanNS[i] != want {
			return fmt.Errorf("repetition %d: makespan %d ns is not the largest rank time (%d ns)", i, s.MakespanNS[i], want)
		}
	}
	for i, d := range s.TeardownNS {
		if d < 0 {
			return fmt.Errorf("teardown_ns[%d] = %d", i, d)
		}
	}
	return nil
}

func (s OpStats) validate() error {
	l := s.NS
	switch {
	case s.Count < 0 || s.Errors < 0:
		return fmt.Errorf("negative count")
	case s.Errors > s.Count:
		return fmt.Errorf("%d errors in %d operations", s.Errors, s.Count)
	case s.OpsPerSec < 0:
		return fmt.Errorf("negative ops_per_sec")
	// A latency is a duration: below zero it is a clock or a file gone
	// wrong, and every statistic of it with it. (Ordered percentiles
	// are all negative when any is: the min is the least of them.)
	case s.Count > 0 && l.Min < 0:
		return fmt.Errorf("negative latency: min %d ns", l.Min)
	case s.Count > 0 && l.Mean < 0:
		return fmt.Errorf("negative latency: mean %g ns", l.Mean)
	case s.Count > 0 && l.Stddev < 0:
		return fmt.Errorf("negative stddev %g ns", l.Stddev)
	case s.Count > 0 && !(l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max):
		return fmt.Errorf("percentiles out of order")
	}
	return nil
}

// NewRunID returns a fresh run id: 16 random hex digits.
func NewRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a time-based id still tells
		// two runs apart.
		return fmt.Sprintf("%016x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// ReportManifest is the file `report` writes into a run folder it reports
// into, listing what it wrote there, so a later run into the folder
// removes those and nothing else.
const ReportManifest = ".xrcbench-report.json"

// Manifest is the content of ReportManifest.
type Manifest struct {
	RunID string   `json:"run_id"`
	Files []string `json:"files"` // relative to the folder
}

// WriteManifest records files (relative to dir) as written by `report`
// for the run runID.
func WriteManifest(dir, runID string, files []string) error {
	data, err := json.MarshalIndent(Manifest{RunID: runID, Files: files}, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, ReportManifest), append(data, '\n'), 0o644)
}

// WriteManifestIn is WriteManifest beneath the folder's handle.
func WriteManifestIn(dir *safedir.Dir, runID string, files []string) error {
	data, err := json.MarshalIndent(Manifest{RunID: runID, Files: files}, "", "  ")
	if err != nil {
		return err
	}
	return dir.WriteFile(ReportManifest, append(data, '\n'), 0o644)
}

// LoadManifest reads dir's report manifest.
func LoadManifest(dir string) (*Manifest, error) {
	data, err := regfile.ReadFile(filepath.Join(dir, ReportManifest), regfile.MaxSweep)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReportManifest), err)
	}
	return &m, nil
}

// LocalName reports whether name, from a file list, names something inside
// the folder: relative, clean, not climbing out. Lists come from files a
// user can edit; nothing outside the folder is ever removed on their word.
func LocalName(name string) bool {
	return name != "" && filepath.IsLocal(name) && filepath.Clean(name) == name
}
