package device

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// simWithQPs makes a sim device in dir holding n QPs, as the double keeps
// one per device in its state folder.
func simWithQPs(t *testing.T, dir string, n int) {
	t.Helper()
	dev, err := verbs.Open(verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "domain"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dom.Close() })
	for range n {
		if _, err := dom.CreateRcvQP(); err != nil {
			t.Fatal(err)
		}
	}
}

// CountQPs answers for every provider: the sim device and the double's are
// inspected (the kernel knows neither), a real device is asked of the
// kernel. A double configured but no device named is a kernel question.
func TestCountQPs(t *testing.T) {
	state := t.TempDir()
	simWithQPs(t, filepath.Join(state, "sim"), 3)
	simWithQPs(t, filepath.Join(state, "xbfake0"), 2)
	tests := []struct {
		name, provider, device, simDir, doubleDir string
		n                                         int
		method                                    string
	}{
		{"sim", "sim", "", filepath.Join(state, "sim"), "", 3, BySimInspect},
		{"double rdma", "rdma", "xbfake0", "", state, 2, ByDoubleInspect},
		{"double legacy", "legacy", "xbfake0", "", state, 2, ByDoubleInspect},
		{"double, no such device", "rdma", "xbfake9", "", state, -1, ByDoubleInspect},
		{"real device", "rdma", "mlx5_9", "", "", -1, ByNetlink},
		{"double, no device named", "rdma", "", "", state, -1, ByNetlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XRCBENCH_FAKEVERBS_DIR", tt.doubleDir)
			n, method, err := CountQPs(tt.provider, tt.device, tt.simDir)
			if method != tt.method {
				t.Errorf("method %q, want %q", method, tt.method)
			}
			if tt.n < 0 {
				// No such device here: the double has no folder for it, and
				// the kernel (if it has RDMA netlink at all) lists none.
				var ne *NetlinkError
				if err == nil || (tt.method == ByNetlink && !errors.As(err, &ne)) {
					t.Errorf("n %d, err %v: want the reason it could not be counted", n, err)
				}
				return
			}
			if err != nil || n != tt.n {
				t.Errorf("n %d, err %v; want %d", n, err, tt.n)
			}
		})
	}
}
