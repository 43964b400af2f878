package bench

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"n1", []string{"n1"}},
		{"n[1-3]", []string{"n1", "n2", "n3"}},
		{"n[08-10],gpu1", []string{"n08", "n09", "n10", "gpu1"}},
		{"rack[1,3-4]-a,x", []string{"rack1-a", "rack3-a", "rack4-a", "x"}},
		{"", nil},
		{"n[3-1]", nil},
		{"n[a-b]", nil},
		{"n[1-2", nil},
	}
	for _, tt := range tests {
		if got := ExpandHostlist(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ExpandHostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFleetIdentity(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    *results.Fleet
		wantErr string
	}{
		{"slurm", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "2", "SLURM_NNODES": "3", "SLURMD_NODENAME": "c3", "SLURM_LOCALID": "0"},
			&results.Fleet{Launcher: "slurm", JobID: "77", Node: "c3", Rank: 2, Nodes: 3}, ""},
		{"slurm, node from hostname", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_JOB_NUM_NODES": "2"},
			&results.Fleet{Launcher: "slurm", JobID: "77", Node: "host", Rank: 0, Nodes: 2}, ""},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1", "PMIX_NAMESPACE": "prterun-x-1@1"},
			&results.Fleet{Launcher: "openmpi", JobID: "prterun-x-1@1", Node: "host", Rank: 1, Nodes: 4}, ""},
		{"pmix", map[string]string{"PMIX_RANK": "5"}, &results.Fleet{Launcher: "pmix", Node: "host", Rank: 5}, ""},
		{"no launcher", map[string]string{"SLURM_JOB_ID": "77"}, nil, "no launcher found"},
		{"second task", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "1", "SLURM_NNODES": "1", "SLURM_LOCALID": "1"}, nil, "second task on node host"},
		{"second open mpi task", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, nil, "second task"},
		{"more tasks than nodes", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "3", "SLURM_NNODES": "2"}, nil, "more tasks than nodes"},
		{"bad rank", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "x"}, nil, `SLURM_PROCID="x"`},
		{"node name a path", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURMD_NODENAME": "../etc"}, nil, "cannot name a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FleetIdentity(func(k string) string { return tt.env[k] }, "host")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrFleet) {
					t.Fatalf("err %v, want ErrFleet containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", *got, *tt.want)
			}
		})
	}
}

// Nodes meeting at the barrier agree on one start, on the shared folder's
// clock, and each knows every node's clock offset.
func TestFleetBarrierMeet(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a1", "a2", "a3"}
	syncs := make([]*results.FleetSync, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 150 * time.Millisecond) // arrivals spread out
			b := &FleetBarrier{Dir: dir, Fleet: &results.Fleet{Launcher: "slurm", JobID: "7", Node: n, Rank: i, Nodes: 3},
				Deadline: 30 * time.Second, Margin: 300 * time.Millisecond, Poll: 20 * time.Millisecond}
			syncs[i], errs[i] = b.Meet(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
	}
	for i, s := range syncs {
		if !s.StartAt.Equal(syncs[0].StartAt) {
			t.Errorf("%s starts at %v, %s at %v", names[i], s.StartAt, names[0], syncs[0].StartAt)
		}
		if len(s.Offsets) != 3 {
			t.Errorf("%s: offsets %v", names[i], s.Offsets)
		}
	}
	// The first arrival waited for the last, which came about 300ms later.
	if syncs[0].WaitedNS < (250 * time.Millisecond).Nanoseconds() {
		t.Errorf("the first node waited %v, less than the others took to come", time.Duration(syncs[0].WaitedNS))
	}
}

// One node giving up at its deadline makes the others give up too,
// naming who never came, instead of measuring without it.
func TestFleetBarrierGiveUp(t *testing.T) {
	dir := t.TempDir()
	meet := func(node string, rank int, deadline time.Duration) error {
		b := &FleetBarrier{Dir: dir, Fleet: &results.Fleet{Launcher: "slurm", JobID: "8", Node: node, Rank: rank, Nodes: 3},
			Expected: []string{"b1", "b2", "b3"}, Deadline: deadline, Margin: time.Second, Poll: 20 * time.Millisecond}
		_, err := b.Meet(context.Background())
		return err
	}
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- meet("b2", 1, time.Minute) }()
	if err := meet("b1", 0, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "never arrived: b3") {
		t.Fatalf("b1: %v, want an error naming b3", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "b1 gave up") {
			t.Errorf("b2: %v, want it to follow b1", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b2 still waits for a fleet b1 has left")
	}
	if time.Since(began) > 15*time.Second {
		t.Errorf("b2 took %v to give up, its deadline was 1m", time.Since(began))
	}
}
