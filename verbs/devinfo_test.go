package verbs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/results"
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
		})
	}
}

// fakeSysfs lays out /sys/class/infiniband/<name> as the kernel does for a
// PCI adapter and returns the class directory.
func fakeSysfs(t *testing.T, name, pci, driver, numa string) string {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "devices", "pci0000:00", pci)
	drv := filepath.Join(root, "bus", "pci", "drivers", driver)
	cls := filepath.Join(root, "class", "infiniband", name)
	for _, d := range []string{dev, drv, cls} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if numa != "" {
		must(os.WriteFile(filepath.Join(dev, "numa_node"), []byte(numa+"\n"), 0o644))
	}
	must(os.Symlink(drv, filepath.Join(dev, "driver")))
	must(os.Symlink(dev, filepath.Join(cls, "device")))
	must(os.WriteFile(filepath.Join(cls, "board_id"), []byte("MT_0000000010\n"), 0o644))
	return cls
}

func TestReadSysfs(t *testing.T) {
	tests := []struct {
		name, pci, driver, numa string
		wantNUMA                int
		wantPCI                 string
	}{
		{"mlx5_0", "0000:3b:00.0", "mlx5_core", "1", 1, "0000:3b:00.0"},
		{"rxe0", "0000:00:1f.6", "e1000e", "-1", -1, "0000:00:1f.6"},
		{"mlx4_0", "0000:04:00.0", "mlx4_core", "", -1, "0000:04:00.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := readSysfs(fakeSysfs(t, tt.name, tt.pci, tt.driver, tt.numa))
			if s.driver != tt.driver || s.numa != tt.wantNUMA || s.extra["pci"] != tt.wantPCI {
				t.Errorf("got driver %q numa %d pci %q, want %q %d %q", s.driver, s.numa, s.extra["pci"], tt.driver, tt.wantNUMA, tt.wantPCI)
			}
			if s.extra["board_id"] != "MT_0000000010" {
				t.Errorf("board_id = %q", s.extra["board_id"])
			}
		})
	}
	if s := readSysfs(filepath.Join(t.TempDir(), "missing")); s.driver != "" || s.numa != -1 {
		t.Errorf("missing device: got %+v, want unknowns", s)
	}
}

func TestDevFactsInfo(t *testing.T) {
	cls := fakeSysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "0")
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

// TestSysfsBOM: every device fact of the bill of materials is read from
// where the kernel keeps it, or says in one word why it is not there.
func TestSysfsBOM(t *testing.T) {
	u := results.Unreadable
	tests := []struct {
		name   string
		layout func(t *testing.T, cls, dev, mod string)
		want   results.DeviceBOM
	}{
		{"MLNX_OFED module with a version", func(t *testing.T, cls, dev, mod string) {
			writeFiles(t, map[string]string{filepath.Join(cls, "fw_ver"): "22.31.1014", filepath.Join(cls, "hca_type"): "MT4125",
				filepath.Join(dev, "current_link_speed"): "16.0 GT/s PCIe", filepath.Join(dev, "current_link_width"): "16",
				filepath.Join(mod, "version"): "23.10-1.1.9", filepath.Join(mod, "srcversion"): "ABCDEF0123"})
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: "23.10-1.1.9", FWVer: "22.31.1014", BoardID: "MT_0000000010",
			HCAType: "MT4125", LinkSpeed: "16.0 GT/s PCIe", LinkWidth: "16", NUMANode: "1"}},
		{"in-tree module: srcversion only, no link files", func(t *testing.T, cls, dev, mod string) {
			writeFiles(t, map[string]string{filepath.Join(mod, "srcversion"): "ABCDEF0123"})
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: "srcversion ABCDEF0123", FWVer: u("absent"), BoardID: "MT_0000000010",
			HCAType: u("absent"), LinkSpeed: u("absent"), LinkWidth: u("absent"), NUMANode: "1"}},
		{"built-in driver: no module directory", func(t *testing.T, cls, dev, mod string) {
			if err := os.RemoveAll(mod); err != nil {
				t.Fatal(err)
			}
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: u("builtin"), FWVer: u("absent"), BoardID: "MT_0000000010",
			HCAType: u("absent"), LinkSpeed: u("absent"), LinkWidth: u("absent"), NUMANode: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cls := fakeSysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "1")
			dev, _ := filepath.EvalSymlinks(filepath.Join(cls, "device"))
			drv, _ := filepath.EvalSymlinks(filepath.Join(dev, "driver"))
			mod := filepath.Join(filepath.Dir(cls), "..", "..", "module", "mlx5_core")
			if err := os.MkdirAll(mod, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(mod, filepath.Join(drv, "module")); err != nil {
				t.Fatal(err)
			}
			tt.layout(t, cls, dev, mod)
			if got := sysfsBOM(cls); *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	// No device in sysfs at all (the device's directory unknown): every
	// fact says so, none is left empty.
	got := sysfsBOM("")
	for i, v := range []string{got.Driver, got.DriverVersion, got.FWVer, got.BoardID, got.HCAType, got.LinkSpeed, got.LinkWidth, got.NUMANode} {
		if v != u("absent") {
			t.Errorf("fact %d of a device without sysfs = %q, want %q", i, v, u("absent"))
		}
	}
	// Root reads any file, so the word for a denied read is checked on
	// the error itself too.
	if got := whyUnreadable(&os.PathError{Op: "open", Path: "board_id", Err: syscall.EACCES}); got != "permission" {
		t.Errorf("EACCES is %q, want permission", got)
	}
	if os.Geteuid() != 0 {
		cls := fakeSysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "1")
		if err := os.Chmod(filepath.Join(cls, "board_id"), 0); err != nil {
			t.Fatal(err)
		}
		if got := sysfsBOM(cls).BoardID; got != u("permission") {
			t.Errorf("unreadable board_id = %q, want %q", got, u("permission"))
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, v := range files {
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
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

func TestLibraryVersion(t *testing.T) {
	tests := []struct {
		path   string
		double bool
		want   string
	}{
		{"", false, ""},
		{"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", false, "rdma-core 44.0"},
		{"/usr/lib64/libibverbs.so.1.11.32.0", false, "rdma-core 32.0"},
		{"/work/build/fakeverbs/libibverbs.so.1", true, "xrcbench fakeverbs (test double)"},
		// The name alone proves nothing: only the marker does.
		{"/work/build/fakeverbs/libibverbs.so.1", false, "libibverbs libibverbs.so.1"},
		{"/opt/ofed/lib/libibverbs.so.1.0.0", false, "libibverbs libibverbs.so.1.0.0"},
	}
	for _, tt := range tests {
		if got := libraryVersion(tt.path, tt.double); got != tt.want {
			t.Errorf("libraryVersion(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestIsTestDouble: the double is recognised by its marker symbol, and
// nothing else is, not even rdma-core's library in a folder named like
// the double's.
func TestIsTestDouble(t *testing.T) {
	tmp := t.TempDir()
	notELF := filepath.Join(tmp, "libibverbs.so.1")
	if err := os.WriteFile(notELF, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	if isTestDouble(notELF) || isTestDouble(filepath.Join(tmp, "missing.so")) || isTestDouble("") {
		t.Error("a file that is no library, or none, is called the test double")
	}
	t.Run("double", func(t *testing.T) {
		lib := filepath.Join(doubleLibDir(t), "libibverbs.so.1")
		if !isTestDouble(lib) {
			t.Errorf("%s (the double) is not recognised: no %s symbol", lib, testDoubleMarker)
		}
	})
	t.Run("rdma-core", func(t *testing.T) {
		real, _ := filepath.Glob("/usr/lib*/*/libibverbs.so.1.*")
		more, _ := filepath.Glob("/usr/lib*/libibverbs.so.1.*")
		real = append(real, more...)
		if len(real) == 0 {
			t.Skip("rdma-core's libibverbs is not installed (apt-get install libibverbs1)")
		}
		data, err := os.ReadFile(real[0])
		if err != nil {
			t.Fatal(err)
		}
		named := filepath.Join(tmp, "fakeverbs", "libibverbs.so.1")
		if err := os.MkdirAll(filepath.Dir(named), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(named, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{real[0], named} {
			if isTestDouble(p) {
				t.Errorf("%s (rdma-core) is called the test double", p)
			}
		}
	})
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
