package results

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sample() *Result {
	h := NewHistogram()
	for v := int64(100); v <= 10000; v += 100 {
		h.RecordValue(v)
	}
	enc, _ := EncodeHistogram(h)
	return &Result{
		Status:     StatusOK,
		Started:    time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
		Config:     Config{Workload: "lifecycle", Provider: "sim", Procs: 2, Threads: 2, QPs: 16, Warmup: Duration(time.Second)},
		Ops:        map[string]OpStats{OpReg: {Count: h.TotalCount(), OpsPerSec: 1000, NS: Summarize(h)}},
		Histograms: map[string]string{OpReg: enc},
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema || got.Config.Warmup != Duration(time.Second) || got.Ops[OpReg].NS != r.Ops[OpReg].NS || got.Ops[OpReg].Count != 100 {
		t.Fatalf("round trip changed the result: %+v", got)
	}
	h, err := DecodeHistogram(got.Histograms[OpReg])
	if err != nil || h.TotalCount() != 100 || Summarize(h) != r.Ops[OpReg].NS {
		t.Fatalf("histogram round trip: %v, %d values", err, h.TotalCount())
	}
	// No temporary file is left beside it.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after an atomic write, want 1", len(entries))
	}
}

func TestLoadRejects(t *testing.T) {
	good, err := json.Marshal(func() *Result { r := sample(); r.Schema = Schema; return r }())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*Result)) string {
		r := sample()
		r.Schema = Schema
		f(r)
		b, _ := json.Marshal(r)
		return string(b)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"truncated", string(good[:len(good)/2]), "not a complete result.json"},
		{"other schema", edit(func(r *Result) { r.Schema = "xrcbench.result/v2" }), `schema "xrcbench.result/v2"`},
		{"foreign JSON", `{"hello": "world"}`, "schema"},
		{"bad status", edit(func(r *Result) { r.Status = "great" }), `status "great"`},
		{"failed without why", edit(func(r *Result) { r.Status = StatusFailed }), "without an error"},
		{"no workload", edit(func(r *Result) { r.Config.Workload = "" }), "lacks workload"},
		{"no procs", edit(func(r *Result) { r.Config.Procs = 0 }), "procs=0"},
		{"more errors than ops", edit(func(r *Result) { s := r.Ops[OpReg]; s.Errors = s.Count + 1; r.Ops[OpReg] = s }), "errors in"},
		{"percentiles out of order", edit(func(r *Result) { s := r.Ops[OpReg]; s.NS.P99 = s.NS.Max + 1; r.Ops[OpReg] = s }), "out of order"},
		{"all percentiles below zero", edit(func(r *Result) {
			s := r.Ops[OpReg]
			s.NS = Latency{Min: -900, P50: -800, P90: -700, P99: -600, P999: -500, Max: -400, Mean: -700}
			r.Ops[OpReg] = s
		}), "ops.reg: negative latency: min -900 ns"},
		{"negative min", edit(func(r *Result) { s := r.Ops[OpReg]; s.NS.Min = -1; r.Ops[OpReg] = s }), "negative latency: min -1 ns"},
		{"negative mean", edit(func(r *Result) { s := r.Ops[OpReg]; s.NS.Mean = -3.5; r.Ops[OpReg] = s }), "negative latency: mean -3.5 ns"},
		{"negative stddev", edit(func(r *Result) { s := r.Ops[OpReg]; s.NS.Stddev = -1; r.Ops[OpReg] = s }), "negative stddev -1 ns"},
		{"negative in a repetition", edit(func(r *Result) {
			s := r.Ops[OpReg]
			s.NS.Min, s.NS.P50 = -20, -10
			r.Repetitions = []Repetition{{Ops: map[string]OpStats{OpReg: s}}}
		}), "repetitions[0].ops.reg: negative latency: min -20 ns"},
		{"storm makespan not the slowest rank", edit(func(r *Result) { r.Storm = sampleStorm(); r.Storm.MakespanNS[1] = 5 }), "makespan 5 ns is not the largest rank time (900 ns)"},
		{"storm makespan of an unfinished storm", edit(func(r *Result) { r.Storm = sampleStorm(); r.Storm.RankDoneNS[0][1] = -1 }), "not the largest rank time (-1 ns)"},
		{"storm ranks missing", edit(func(r *Result) { r.Storm = sampleStorm(); r.Storm.RankDoneNS[0] = []int64{1} }), "1 rank times for 2 ranks"},
		{"storm negative teardown", edit(func(r *Result) { r.Storm = sampleStorm(); r.Storm.TeardownNS = []int64{-3} }), "teardown_ns[0] = -3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load: %v; want ErrInvalid naming %s and containing %q", err, path, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing folder: %v, want not exist", err)
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Duration
		bad  bool
	}{
		{`"1.5s"`, Duration(1500 * time.Millisecond), false},
		{`250`, Duration(250), false},
		{`"soon"`, 0, true},
		{`true`, 0, true},
	} {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err != nil) != tc.bad || (!tc.bad && d != tc.want) {
			t.Errorf("%s: %v, %v", tc.in, d, err)
		}
	}
}

// result.json and sweep.json that are not regular files (a FIFO would block
// the reader forever, /dev/zero would fill its memory) are refused at once.
func TestLoadRefusesNonRegular(t *testing.T) {
	for _, name := range []string{FileName, SweepFileName} {
		for _, kind := range []string{"fifo", "zero"} {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			want := "not a regular file (a FIFO)"
			if kind == "fifo" {
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.Symlink("/dev/zero", path); err != nil {
					t.Fatal(err)
				}
				want = "not a regular file (a character device)"
			}
			done := make(chan error, 1)
			go func() {
				var err error
				if name == FileName {
					_, err = Load(dir)
				} else {
					_, err = LoadSweep(dir)
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s as %s: %v, want an error naming it: %s", name, kind, err, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s as %s: still blocked after 10s", name, kind)
			}
		}
	}
}

func sampleStorm() *Storm {
	return &Storm{Nodes: 9, Ranks: 2, Rails: 1, QPs: 16, Registrations: 16, Arrival: "burst", Teardown: "unreg",
		MakespanNS: []int64{1000, 900}, RankDoneNS: [][]int64{{1000, 700}, {900, 850}}}
}

// A storm whose figures agree loads.
func TestStormRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	r.Storm = sampleStorm()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Storm == nil || got.Storm.MakespanNS[0] != 1000 || got.Storm.RankDoneNS[1][1] != 850 {
		t.Errorf("storm %+v", got.Storm)
	}
}
