package verbs

import (
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
)

func TestOpenErrorMessages(t *testing.T) {
	mlx := devFacts{Name: "mlx5_0", DevName: "uverbs0", Queried: true, XRC: true}
	all := []devFacts{{Name: "rxe0", Queried: true}, {Name: "mlx5_1", Queried: false, OpenErrno: syscall.EACCES}}
	tests := []struct {
		name      string
		stage     int
		errno     syscall.Errno
		f         devFacts
		all       []devFacts
		want      []string
		notSupp   bool
		wantErrno syscall.Errno
	}{
		{"no kernel support", stageList, syscall.ENOSYS, devFacts{}, nil,
			[]string{"no RDMA device found", "ENOSYS", "ib_uverbs"}, true, syscall.ENOSYS},
		{"empty list", stageNoDev, syscall.ENODEV, devFacts{}, nil,
			[]string{"no RDMA device found", "ibv_devices"}, true, syscall.ENODEV},
		{"unknown name", stageNotFound, syscall.ENODEV, devFacts{Name: "mlx9_9"}, all,
			[]string{`no RDMA device named "mlx9_9"`, "rxe0 (no XRC)", "mlx5_1 (cannot be opened)"}, false, syscall.ENODEV},
		{"permission denied", stageOpen, syscall.EACCES, mlx, nil,
			[]string{"/dev/infiniband/uverbs0", "mlx5_0", "permission denied", "run as root"}, false, syscall.EACCES},
		{"eperm is permission too", stageOpen, syscall.EPERM, mlx, nil,
			[]string{"/dev/infiniband/uverbs0", "permission denied"}, false, syscall.EPERM},
		{"no XRC anywhere", stageNoXRCAny, syscall.EOPNOTSUPP, devFacts{Name: "rxe0"}, all[:1],
			[]string{"no RDMA device with XRC", "rxe0 (no XRC)"}, true, syscall.EOPNOTSUPP},
		{"no open_qp", stageNoOpenQP, syscall.EOPNOTSUPP, devFacts{Name: "qedr0", XRC: true}, nil,
			[]string{"qedr0 has XRC", "ibv_open_qp", "EOPNOTSUPP", "mlx5"}, true, syscall.EOPNOTSUPP},
		{"named device lacks XRC", stageNoXRC, syscall.EOPNOTSUPP, devFacts{Name: "siw0"}, nil,
			[]string{"device siw0 lacks XRC", "IBV_DEVICE_XRC"}, true, syscall.EOPNOTSUPP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := openError("rdma", tt.stage, tt.errno, tt.f, tt.all)
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			if !errors.Is(err, tt.wantErrno) {
				t.Errorf("errors.Is(err, %v) = false", tt.wantErrno)
			}
			if got := errors.Is(err, ErrNotSupported); got != tt.notSupp {
				t.Errorf("errors.Is(err, ErrNotSupported) = %v, want %v", got, tt.notSupp)
			}
			// conform tells a device without ibv_open_qp from the rest.
			if got := errors.Is(err, ErrNoOpenQP); got != (tt.stage == stageNoOpenQP) {
				t.Errorf("errors.Is(err, ErrNoOpenQP) = %v", got)
			}
		})
	}
}

func TestDevFactsInfo(t *testing.T) {
	cls := testdouble.Sysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "0")
	f := devFacts{Name: "mlx5_0", DevName: "uverbs0", IBDevPath: cls, FWVer: "16.35.2000", NodeGUID: 0x0002c90300a0b1c2,
		VendorID: 0x02c9, VendorPartID: 4119, HWVer: 0, MaxQP: 262144, Ports: 1, Queried: true,
		XRC: true, OpenXRCD: true, CreateQPEx: true, OpenQP: true, KnowsOps: true, OpenQPProbe: syscall.EINVAL}
	in := f.info("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0")
	want := DeviceInfo{Name: "mlx5_0", XRC: true, OpenQP: true, FWVer: "16.35.2000", HWVer: "0x0",
		VendorID: 0x02c9, VendorPartID: 4119, NodeGUID: "0002:c903:00a0:b1c2", MaxQP: 262144, Ports: 1,
		Driver: "mlx5_core", NUMANode: 0, Library: "rdma-core 44.0", sysfsDir: cls}
	got := in
	got.Extra, got.Capabilities, got.BOM = nil, nil, nil // TestCapabilities, TestSysfsBOM
	if !reflect.DeepEqual(got, want) {
		t.Errorf("info:\n got %+v\nwant %+v", got, want)
	}
	if in.Extra["pci"] != "0000:3b:00.0" || in.Extra["uverbs"] != "/dev/infiniband/uverbs0" {
		t.Errorf("extra = %v", in.Extra)
	}
	// Without the ops (legacy dlsym path) open_qp is unknown, not false by accident.
	f.KnowsOps = false
	if in := f.info(""); in.OpenQP || !strings.HasPrefix(in.Extra["open_qp"], "unknown") {
		t.Errorf("without ops: OpenQP %v, extra %q", in.OpenQP, in.Extra["open_qp"])
	}
}

// TestCapabilities: what each probe call returned becomes a verdict and
// the words for how it was reached.
func TestCapabilities(t *testing.T) {
	base := devFacts{Name: "d0", Queried: true, KnowsOps: true}
	tests := []struct {
		name               string
		xrcd, create, open syscall.Errno
		want               [3]bool
		wantHow            [3]string
	}{
		{"mlx5", 0, 0, syscall.EINVAL, [3]bool{true, true, true},
			[3]string{"opened a scratch domain", "created a QP", "failed EINVAL, not EOPNOTSUPP: the provider implements it"}},
		{"qedr", 0, 0, syscall.EOPNOTSUPP, [3]bool{true, true, false},
			[3]string{"opened", "created", "failed EOPNOTSUPP: the provider does not implement it"}},
		{"rxe", syscall.EOPNOTSUPP, probeNotTried, probeNotTried, [3]bool{},
			[3]string{"failed EOPNOTSUPP", "not probed: no scratch XRC domain", "not probed"}},
		{"no memfd", probeNotTried, probeNotTried, probeNotTried, [3]bool{},
			[3]string{"not probed: no anonymous file", "not probed", "not probed"}},
		{"open_qp found a QP", 0, 0, 0, [3]bool{true, true, true},
			[3]string{"opened", "created", "QP number 0xffffff succeeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base
			f.OpenXRCDProbe, f.CreateQPExProbe, f.OpenQPProbe = tt.xrcd, tt.create, tt.open
			unsupp := func(e syscall.Errno) bool { return e == probeNotTried || e == syscall.EOPNOTSUPP }
			f.OpenXRCD, f.CreateQPEx, f.OpenQP = !unsupp(tt.xrcd), !unsupp(tt.create), !unsupp(tt.open)
			caps := f.capabilities()
			if len(caps) != 3 {
				t.Fatalf("got %d capabilities: %+v", len(caps), caps)
			}
			for i, name := range []string{"open_xrcd", "create_qp_ex", "open_qp"} {
				c := caps[i]
				if c.Name != name || c.Supported != tt.want[i] || !strings.Contains(c.How, tt.wantHow[i]) {
					t.Errorf("%s: got %+v, want supported %v and how containing %q", name, c, tt.want[i], tt.wantHow[i])
				}
			}
		})
	}
	f := base
	f.KnowsOps = false
	if caps := f.capabilities(); caps != nil {
		t.Errorf("legacy path: %+v, want none (the calls cannot be made)", caps)
	}
}

// portInfo names the verbs enums as ibv_devinfo does.
func TestPortInfo(t *testing.T) {
	tests := []struct {
		f    portFacts
		want PortInfo
	}{
		{portFacts{Queried: true, State: 4, ActiveMTU: 3, LinkLayer: 2}, PortInfo{Port: 1, State: "ACTIVE", ActiveMTU: 1024, LinkLayer: "Ethernet"}},
		{portFacts{Queried: true, State: 1, ActiveMTU: 5, LinkLayer: 1}, PortInfo{Port: 1, State: "DOWN", ActiveMTU: 4096, LinkLayer: "InfiniBand"}},
		{portFacts{Queried: true, State: 2, ActiveMTU: 1, LinkLayer: 0}, PortInfo{Port: 1, State: "INIT", ActiveMTU: 256, LinkLayer: "InfiniBand"}},
		{portFacts{Queried: true, State: 9, ActiveMTU: 0, LinkLayer: 7}, PortInfo{Port: 1, State: "state9", LinkLayer: "link_layer7"}},
	}
	for _, tt := range tests {
		if got := tt.f.portInfo(1); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v: %+v, want %+v", tt.f, got, tt.want)
		}
	}
}
