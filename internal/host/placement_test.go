package host

import (
	"slices"
	"testing"

	"github.com/xrcbench/xrcbench/workloads"
)

// TestThreadCPUs: auto binds a storm's ranks to CPUs of their own when
// they fit, the device's NUMA node and distinct cores first; cpu binds
// every workload, round-robin; none and oversubscribed auto bind nothing.
func TestThreadCPUs(t *testing.T) {
	// Two nodes of two cores of two hardware threads: CPUs 0,4 and 1,5
	// on node 0, 2,6 and 3,7 on node 1.
	sys := map[string]string{"node/node0/cpulist": "0-1,4-5", "node/node1/cpulist": "2-3,6-7"}
	for c, sib := range []string{"0,4", "1,5", "2,6", "3,7", "0,4", "1,5", "2,6", "3,7"} {
		sys["cpu/cpu"+string(rune('0'+c))+"/topology/thread_siblings_list"] = sib
	}
	fakeSysDevices(t, sys)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	tests := []struct {
		name    string
		p       Placement
		mode    workloads.Mode
		threads int
		allowed []int
		numa    int
		want    []int
	}{
		{"auto storm, device on node 1", PinAuto, workloads.StormMode, 2, all, 1, []int{2, 3}},
		{"auto storm, node 1's cores then their siblings", PinAuto, workloads.StormMode, 4, all, 1, []int{2, 3, 6, 7}},
		{"auto storm, past the node", PinAuto, workloads.StormMode, 6, all, 1, []int{2, 3, 6, 7, 0, 1}},
		{"auto storm, node unknown: cores first", PinAuto, workloads.StormMode, 5, all, -1, []int{0, 1, 2, 3, 4}},
		{"auto storm, every CPU", PinAuto, workloads.StormMode, 8, all, 0, []int{0, 1, 4, 5, 2, 3, 6, 7}},
		{"auto storm, ranks outnumber CPUs", PinAuto, workloads.StormMode, 9, all, 0, nil},
		{"auto storm, the allowed CPUs only", PinAuto, workloads.StormMode, 2, []int{5, 6}, 1, []int{6, 5}},
		{"auto loop workload", PinAuto, workloads.Loop, 2, all, 0, nil},
		{"cpu loop workload, round-robin", PinCPU, workloads.Loop, 3, []int{0, 1}, -1, []int{0, 1, 0}},
		{"cpu storm past the CPUs", PinCPU, workloads.StormMode, 3, []int{0, 4}, -1, []int{0, 4, 0}},
		{"none storm", PinNone, workloads.StormMode, 2, all, 0, nil},
		{"no CPU known", PinCPU, workloads.Loop, 2, nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ThreadCPUs(tt.p, tt.mode, tt.threads, tt.allowed, NodeCPUs(tt.numa))
			if !slices.Equal(got, tt.want) {
				t.Errorf("threadCPUs = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestParsePlacement: the choices, and --pin's boolean spellings as they
// meant before placement was a choice.
func TestParsePlacement(t *testing.T) {
	for in, want := range map[string]Placement{"": PinAuto, "auto": PinAuto, "cpu": PinCPU, "true": PinCPU,
		"none": PinNone, "false": PinNone, "NONE": PinNone} {
		if got, err := ParsePlacement(in); err != nil || got != want {
			t.Errorf("ParsePlacement(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"core", "yes", "2"} {
		if _, err := ParsePlacement(bad); err == nil {
			t.Errorf("ParsePlacement(%q) accepted", bad)
		}
	}
}
