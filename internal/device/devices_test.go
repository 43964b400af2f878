package device

import (
	"reflect"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// setLiveQPs: the kernel's count and numbers, or why there are none.
func TestSetLiveQPs(t *testing.T) {
	all := map[string][]LiveQP{"rxe0": {{QPN: 1, Type: "GSI"}, {QPN: 17, Type: "RC"}}, "rxe1": nil}
	tests := []struct {
		name  string
		err   error
		count int // -1: none
		qpns  []uint32
		note  string
	}{
		{"rxe0", nil, 2, []uint32{1, 17}, ""},
		{"rxe1", nil, 0, []uint32{}, ""},
		{"xbfake0", nil, -1, nil, "n/a: the kernel's RDMA netlink does not list xbfake0"},
		{"rxe0", &NetlinkError{Reason: "the kernel has no RDMA netlink"}, -1, nil, "n/a: the kernel has no RDMA netlink"},
	}
	for _, tt := range tests {
		var in verbs.DeviceInfo
		in.Name = tt.name
		src := all
		if tt.err != nil {
			src = nil
		}
		setLiveQPs(&in, src, tt.err)
		count := -1
		if in.LiveQPs != nil {
			count = *in.LiveQPs
		}
		if count != tt.count || !reflect.DeepEqual(in.LiveQPNs, tt.qpns) || in.LiveQPsNote != tt.note {
			t.Errorf("%s (%v): %d %v %q, want %d %v %q", tt.name, tt.err, count, in.LiveQPNs, in.LiveQPsNote, tt.count, tt.qpns, tt.note)
		}
	}
}
