package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/xrcbench/xrcbench/internal/regfile"
)

// SweepSchema is the value of Sweep.Schema this package writes and reads.
const SweepSchema = "xrcbench.sweep/v1"

// SweepFileName is the name of the index file in a sweep folder.
const SweepFileName = "sweep.json"

// Sweep is sweep.json: the index of a sweep folder, one point per
// configuration, each point a run folder of its own.
type Sweep struct {
	Schema string       `json:"schema"`
	Points []SweepPoint `json:"points"`
}

// SweepPoint is one configuration of a sweep.
type SweepPoint struct {
	Dir     string `json:"dir"` // the point's run folder, relative to the sweep folder
	Procs   int    `json:"procs"`
	Threads int    `json:"threads"`
	QPs     int    `json:"qps"`
	Nodes   int    `json:"nodes,omitempty"` // a storm's nodes
	// SimCost is the point's sim cost model (as --sim-cost takes it, or
	// "zero"), where the sweep varies it; "" where it does not.
	SimCost string `json:"sim_cost,omitempty"`
	Status  string `json:"status"` // the point's Result.Status
}

// WriteSweep writes s as dir/sweep.json, atomically.
func WriteSweep(dir string, s *Sweep) error {
	if s.Schema == "" {
		s.Schema = SweepSchema
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, SweepFileName), append(data, '\n'), 0o644)
}

// LoadSweep reads and validates dir/sweep.json. Errors name the file and
// wrap ErrInvalid when the content is wrong.
func LoadSweep(dir string) (*Sweep, error) {
	path := filepath.Join(dir, SweepFileName)
	data, err := regfile.ReadFile(path, regfile.MaxSweep)
	if err != nil {
		return nil, err
	}
	var s Sweep
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w: not a complete sweep.json (%v)", path, ErrInvalid, err)
	}
	if s.Schema != SweepSchema {
		return nil, fmt.Errorf("%s: %w: schema %q, this xrcbench reads %q", path, ErrInvalid, s.Schema, SweepSchema)
	}
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%s: %w: no points", path, ErrInvalid)
	}
	for i, p := range s.Points {
		if p.Dir == "" || filepath.IsAbs(p.Dir) || p.Procs <= 0 || p.Threads <= 0 {
			return nil, fmt.Errorf("%s: %w: points[%d]: want a relative dir and procs, threads > 0", path, ErrInvalid, i)
		}
	}
	return &s, nil
}
