package bench

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

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
