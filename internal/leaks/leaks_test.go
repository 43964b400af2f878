package leaks

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/verbs"
)

func TestSetHas(t *testing.T) {
	s := NewSet()
	for _, q := range []uint32{0, 1, 63, 64, 0x1a2b, 1<<24 - 1} {
		s.Add(q)
	}
	for _, tt := range []struct {
		qpn  uint32
		want bool
	}{{0, true}, {1, true}, {2, false}, {63, true}, {64, true}, {65, false}, {0x1a2b, true}, {0x1a2c, false}, {1<<24 - 1, true}, {1 << 24, false}} {
		if got := s.Has(tt.qpn); got != tt.want {
			t.Errorf("has(%#x) = %v, want %v", tt.qpn, got, tt.want)
		}
	}
	var none *Set
	if none.Has(1) {
		t.Error("a nil set has QP 1")
	}
}

// jobQPsLeft counts only the job's QPs: the device's own (GSI) and other
// processes' QPs stay listed after the ranks exit and must not count.
func TestJobQPsLeft(t *testing.T) {
	created := NewSet()
	for _, q := range []uint32{0x11, 0x12, 0x1a2b} {
		created.Add(q)
	}
	gsi := device.LiveQP{QPN: 1, Type: "GSI", State: "RTS", KernName: "ib_core"}
	tests := []struct {
		name   string
		listed []device.LiveQP
		want   int
	}{
		{"none listed", nil, 0},
		{"only the device's GSI", []device.LiveQP{gsi}, 0},
		{"two of the job's", []device.LiveQP{gsi, {QPN: 0x11, Type: "XRC_TGT"}, {QPN: 0x1a2b, Type: "XRC_TGT"}}, 2},
		{"another process's QP", []device.LiveQP{gsi, {QPN: 0x13, Type: "RC", PID: 99}}, 0},
	}
	for _, tt := range tests {
		if got := jobQPsLeft(tt.listed, created); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// ExitTeardown on rdma asks the kernel's RDMA netlink: on a kernel
// without one (this CI machine) or without the device, it says why in the
// words of the reader, never the old "cannot count".
func TestExitTeardownNetlink(t *testing.T) {
	created := NewSet()
	created.Add(0x11)
	for _, provider := range []string{"rdma", "legacy"} {
		ns, note := ExitTeardown(verbs.Options{Provider: provider}, "xrcbench-no-such-device", created, verbs.Now())
		if ns != -1 || !strings.HasPrefix(note, "not measurable here: ") || strings.Contains(note, "cannot count") {
			t.Errorf("%s: %d, %q; want -1 and the kernel's reason", provider, ns, note)
		}
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_RDMA)
		if err == nil {
			unix.Close(fd)
			if !strings.Contains(note, `no device named "xrcbench-no-such-device"`) {
				t.Errorf("%s: %q, want the unknown device named", provider, note)
			}
		} else if !strings.Contains(note, "the kernel has no RDMA netlink") {
			t.Errorf("%s: %q, want the kernel's lack of RDMA netlink (socket: %v)", provider, note, err)
		}
	}
	if _, note := ExitTeardown(verbs.Options{Provider: "rdma"}, "rxe0", NewSet(), verbs.Now()); note != "not measurable here: the ranks reported no QP they created" {
		t.Errorf("no QPs: %q", note)
	}
	if _, note := ExitTeardown(verbs.Options{Provider: "null"}, "", created, verbs.Now()); note != "not measurable here: the null provider cannot count the device's live QPs" {
		t.Errorf("null: %q", note)
	}
}
