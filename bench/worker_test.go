package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/workloads"
)

// A worker reports its threads' own failure, not the aborts it caused in
// the others, whatever order the threads sit in.
func TestFirstThreadError(t *testing.T) {
	own := errors.New("thread 1: reg: EINVAL")
	other := errors.New("thread 3: unreg: ENOENT")
	aborted := fmt.Errorf("thread 0: %w", ErrAborted)
	for _, tc := range []struct {
		name string
		errs []error
		want error
	}{
		{"none", []error{nil, nil}, nil},
		{"no threads", nil, nil},
		{"one failure", []error{nil, own, nil}, own},
		{"abort only", []error{aborted, nil}, aborted},
		{"failure after the abort it caused", []error{aborted, own}, own},
		{"failure before the abort", []error{own, aborted}, own},
		{"two failures: the first", []error{own, other}, own},
		{"two failures behind an abort: the first", []error{aborted, other, own}, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstThreadError(tc.errs); got != tc.want {
				t.Errorf("firstThreadError = %v, want %v", got, tc.want)
			}
		})
	}
}

// checkWorkerConfig refuses what the coordinator would never send, and
// draws a storm's plan for every rank of the job.
func TestCheckWorkerConfig(t *testing.T) {
	steady, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	storm, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	stormQPs := storm.Storm.QPs(3, 4)
	for _, tc := range []struct {
		name    string
		cfg     workerConfig
		wantErr string // "" for accepted
		plan    bool
	}{
		{"steady", workerConfig{WorkloadSpec: steady.Source, Threads: 2, ThreadBase: 2, TotalThreads: 4, QPs: 16}, "", false},
		{"no threads", workerConfig{WorkloadSpec: steady.Source, Threads: 0, TotalThreads: 4, QPs: 16}, "threads 0 at 0 of 4", false},
		{"threads past the total", workerConfig{WorkloadSpec: steady.Source, Threads: 2, ThreadBase: 3, TotalThreads: 4, QPs: 16}, "threads 2 at 3 of 4", false},
		{"no qps", workerConfig{WorkloadSpec: steady.Source, Threads: 1, TotalThreads: 1}, "qps 0", false},
		{"broken workload", workerConfig{WorkloadSpec: "name: x\nnope: 1\n", Threads: 1, TotalThreads: 1, QPs: 1}, "nope", false},
		{"storm", workerConfig{WorkloadSpec: storm.Source, Threads: 2, ThreadBase: 2, TotalThreads: 4, QPs: stormQPs, StormNodes: 3}, "", true},
		{"storm of one node", workerConfig{WorkloadSpec: storm.Source, Threads: 4, TotalThreads: 4, QPs: stormQPs, StormNodes: 1}, "storm of 1 nodes", false},
		{"storm with other slots", workerConfig{WorkloadSpec: storm.Source, Threads: 4, TotalThreads: 4, QPs: stormQPs + 1, StormNodes: 3}, fmt.Sprintf("with %d QP slots", stormQPs+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, plan, err := checkWorkerConfig(&tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec == nil {
				t.Fatal("no spec")
			}
			if (plan != nil) != tc.plan {
				t.Fatalf("plan = %v, want one: %v", plan, tc.plan)
			}
			if plan != nil && len(plan.Ranks) != tc.cfg.TotalThreads {
				t.Errorf("plan for %d ranks, want every rank of the job (%d)", len(plan.Ranks), tc.cfg.TotalThreads)
			}
		})
	}
}

// The two messages a worker waits for: anything else is a protocol error,
// and a coordinator gone before the start is the read's own error.
func TestWorkerReads(t *testing.T) {
	frames := func(ms ...*message) *frameReader {
		var b bytes.Buffer
		fw := newFrameWriter(&b)
		for _, m := range ms {
			if err := fw.write(m); err != nil {
				t.Fatal(err)
			}
		}
		return newFrameReader(&b)
	}
	t.Run("config", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			in      *frameReader
			wantErr error
		}{
			{"config", frames(&message{Type: msgConfig, Config: &workerConfig{Threads: 3}}), nil},
			{"start instead", frames(&message{Type: msgStart, Start: &startMsg{}}), errProto},
			{"config without one", frames(&message{Type: msgConfig}), errProto},
			{"nothing", frames(), io.EOF},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cfg, err := readWorkerConfig(tc.in)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if err == nil && cfg.Threads != 3 {
					t.Errorf("config with %d threads, sent 3", cfg.Threads)
				}
			})
		}
	})
	t.Run("start", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			in      *frameReader
			want    uint64
			wantErr error
		}{
			{"start", frames(&message{Type: msgStart, Start: &startMsg{Deadline: 12345}}), 12345, nil},
			{"config instead", frames(&message{Type: msgConfig, Config: &workerConfig{}}), 0, errProto},
			{"start without one", frames(&message{Type: msgStart}), 0, errProto},
			{"hang-up", frames(), 0, io.EOF},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := readStart(tc.in)
				if !errors.Is(err, tc.wantErr) || got != tc.want {
					t.Fatalf("readStart = %d, %v; want %d, %v", got, err, tc.want, tc.wantErr)
				}
			})
		}
	})
}
