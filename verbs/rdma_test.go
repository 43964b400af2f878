package verbs

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// openErrorCase is one way opening a device must fail, with the words the
// user must read and the errno errors.Is must find.
type openErrorCase struct {
	Name     string
	Devices  string // XRCBENCH_FAKEVERBS_DEVICES
	Provider string
	Device   string
	Errno    syscall.Errno
	NotSupp  bool
	Want     []string
	QPState  QPState
}

var openErrorCases = []openErrorCase{
	{"no kernel RDMA", "none", "rdma", "", syscall.ENOSYS, true,
		[]string{"no RDMA device found", "ENOSYS", "ib_uverbs"}, 0},
	{"no devices", "empty", "rdma", "", syscall.ENODEV, true,
		[]string{"no RDMA device found", "lists none"}, 0},
	{"uverbs permission denied", "xblocked0:eacces", "rdma", "", syscall.EACCES, false,
		[]string{"/dev/infiniband/uverbs0", "xblocked0", "permission denied", "run as root"}, 0},
	{"XRC without open_qp", "xbqedr0:noopenqp:driver=qedr", "rdma", "", syscall.EOPNOTSUPP, true,
		[]string{"xbqedr0 has XRC", "driver qedr", "ibv_open_qp", "EOPNOTSUPP"}, 0},
	{"no device with XRC", "xbnoxrc0:noxrc", "rdma", "", syscall.EOPNOTSUPP, true,
		[]string{"no RDMA device with XRC", "xbnoxrc0 (no XRC)"}, 0},
	{"unknown device name", "xbfake0,xbnoxrc0:noxrc", "rdma", "mlx5_7", syscall.ENODEV, false,
		[]string{`no RDMA device named "mlx5_7"`, "xbfake0", "xbnoxrc0 (no XRC)"}, 0},
	{"legacy: no kernel RDMA", "none", "legacy", "", syscall.ENOSYS, true,
		[]string{"no RDMA device found", "ENOSYS"}, 0},
	{"legacy: permission denied", "xblocked0:eacces", "legacy", "", syscall.EACCES, false,
		[]string{"/dev/infiniband/uverbs0", "permission denied"}, 0},
	{"rtr on a port that is down", "xbdown0:portdown", "rdma", "", syscall.ENETDOWN, false,
		[]string{"xbdown0 has no ACTIVE port", "ENETDOWN", "--qp-state init"}, QPRTR},
	{"rtr on a port without a LID", "xbnolid0:noaddr", "rdma", "", syscall.EADDRNOTAVAIL, false,
		[]string{"xbnolid0", "no address", "no LID", "--qp-state init"}, QPRTR},
	{"legacy: rtr on a port that is down", "xbdown0:portdown", "legacy", "", syscall.ENETDOWN, false,
		[]string{"xbdown0 has no ACTIVE port", "--qp-state init"}, QPRTR},
}

func TestDoubleOpenErrors(t *testing.T) {
	for _, c := range openErrorCases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			arg, _ := json.Marshal(c)
			runInDouble(t, "open-error", c.Devices, string(arg))
		})
	}
}

// TestDoubleNoXRCDomain: a device named on purpose that lacks XRC opens,
// says so in its info, and its domain open fails naming the device (S11).
func TestDoubleNoXRCDomain(t *testing.T) {
	runInDouble(t, "noxrc-domain", "xbnoxrc0:noxrc", "")
}

func TestDoubleRDMADevice(t *testing.T) {
	runInDouble(t, "rdma-device", "xbfake0,xbnoxrc0:noxrc,xbqedr0:noopenqp", "")
}

// TestDoubleQPStates: through the double, both providers move a created
// QP to INIT and RTR with attributes the double checks as the kernel does
// (InfiniBand by LID, RoCE by GID), refuse RTR straight from RESET, and on
// a port that is down can still reach INIT but not RTR.
func TestDoubleQPStates(t *testing.T) {
	for _, p := range []string{"rdma", "legacy"} {
		t.Run(p, func(t *testing.T) {
			runInDouble(t, "qp-states", "xbfake0,xbroce0:roce,xbdown0:portdown", p)
		})
	}
}

func TestDoubleRDMAHandles(t *testing.T) {
	runInDouble(t, "rdma-handles", "xbfake0", "")
}

// TestDoubleRdmaCoreTools: rdma-core's own tools, linked against the
// system libibverbs, run against the double and list its device.
func TestDoubleRdmaCoreTools(t *testing.T) {
	lib := doubleLibDir(t)
	tests := []struct {
		tool string
		args []string
		want []string
	}{
		{"ibv_devices", nil, []string{"xbfake0", "fa4e000000000100", "xbnoxrc0"}},
		{"ibv_devinfo", nil, []string{"hca_id:\txbfake0", "fw_ver:\t\t\t\t99.1.0", "vendor_id:\t\t\t0xfa4e",
			"node_guid:\t\t\tfa4e:0000:0000:0100", "board_id:\t\t\tXRCBENCH_FAKE_0001", "PORT_ACTIVE", "hca_id:\txbnoxrc0"}},
		{"ibv_devinfo", []string{"-v", "-d", "xbfake0"}, []string{"max_qp:\t\t\t\t16384", "\t\t\t\t\tXRC\n",
			"GID[  0]:\t\tfe80:0000:0000:0000:fa4e:0000:0000:0100"}},
		{"ibv_devinfo", []string{"-l"}, []string{"2 HCAs found", "xbfake0", "xbnoxrc0"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{tt.tool}, tt.args...), " "), func(t *testing.T) {
			path, err := exec.LookPath(tt.tool)
			if err != nil {
				testenv.Skip(t, testenv.Tool, "%s is not installed (apt-get install ibverbs-utils)", tt.tool)
			}
			cmd := exec.Command(path, tt.args...)
			cmd.Env = doubleEnv(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbnoxrc0:noxrc")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tt.tool, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tt.tool == "ibv_devinfo" && len(tt.args) > 0 && tt.args[0] == "-v" {
				// The XRC flag must be on xbfake0 only: -d limits to it.
				if strings.Contains(string(out), "xbnoxrc0") {
					t.Errorf("-d xbfake0 printed another device:\n%s", out)
				}
			}
		})
	}
}

// TestDoubleFirmwareVersion: the double reports the firmware version it is
// configured with (XRCBENCH_FAKEVERBS_FW_VER), through ibv_query_device and
// its sysfs alike, so a test can play two firmware builds; a value that
// would not fit either fails the device list with one line.
func TestDoubleFirmwareVersion(t *testing.T) {
	lib := doubleLibDir(t)
	path, err := exec.LookPath("ibv_devinfo")
	if err != nil {
		testenv.Skip(t, testenv.Tool, "ibv_devinfo is not installed (apt-get install ibverbs-utils)")
	}
	tests := []struct {
		fw      string
		ok      bool
		want    string
		sysfsFW string
	}{
		{"22.31.1014", true, "fw_ver:\t\t\t\t22.31.1014", "22.31.1014\n"},
		{"candidate-23.0.0", true, "fw_ver:\t\t\t\tcandidate-23.0.0", "candidate-23.0.0\n"},
		{"", false, "XRCBENCH_FAKEVERBS_FW_VER=\"\": want 1 to 63 printable characters", ""},
		{"1.0 beta", false, "without spaces", ""},
		{"../x", false, "or '/'", ""},
		{strings.Repeat("9", 64), false, "want 1 to 63", ""},
	}
	for _, tt := range tests {
		t.Run(tt.fw, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			cmd := exec.Command(path, "-d", "xbfake0")
			cmd.Env = append(doubleEnv(lib, state, "xbfake0"), "XRCBENCH_FAKEVERBS_FW_VER="+tt.fw)
			out, err := cmd.CombinedOutput()
			if tt.ok != (err == nil) || !strings.Contains(string(out), tt.want) {
				t.Fatalf("err %v, want ok=%v and %q in:\n%s", err, tt.ok, tt.want, out)
			}
			if tt.ok {
				got, err := os.ReadFile(filepath.Join(state, "sysfs", "class", "infiniband", "xbfake0", "fw_ver"))
				if err != nil || string(got) != tt.sysfsFW {
					t.Errorf("sysfs fw_ver %q, %v; want %q", got, err, tt.sysfsFW)
				}
			} else if strings.Count(string(out), "fakeverbs:") != 1 {
				t.Errorf("want one line from the double:\n%s", out)
			}
		})
	}
}

// TestRDMAWithoutDevices runs in the parent, against the system
// libibverbs: on a machine without RDMA it must give the clear error.
func TestRDMAWithoutDevices(t *testing.T) {
	lib := rdmaLibrary()
	if strings.Contains(lib, "fakeverbs") {
		t.Skip("the double is loaded")
	}
	if _, err := os.Stat("/sys/class/infiniband_verbs"); err == nil {
		t.Skip("this machine has RDMA in its kernel")
	}
	_, err := Open(Options{Provider: "rdma"})
	if err == nil || !strings.Contains(err.Error(), "no RDMA device found") || !errors.Is(err, ErrNotSupported) {
		t.Fatalf("Open(rdma) = %v, want a 'no RDMA device found' error", err)
	}
	if _, err := Devices(); err == nil || !strings.Contains(err.Error(), "no RDMA device found") {
		t.Fatalf("Devices() = %v, want a 'no RDMA device found' error", err)
	}
}

func init() {
	doubleCases["qp-states"] = func(t *testing.T, provider string) {
		dir := t.TempDir()
		for _, tc := range []struct {
			device   string
			state    QPState
			rtrErrno syscall.Errno // of a single RESET-INIT-RTR walk
		}{
			{"xbfake0", QPRTR, 0},
			{"xbroce0", QPRTR, 0},
			{"xbfake0", QPInit, 0},
			{"xbdown0", QPInit, syscall.ENETDOWN},
		} {
			name := fmt.Sprintf("%s at %v", tc.device, tc.state)
			dev, err := Open(Options{Provider: provider, Device: tc.device, QPState: tc.state})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			dom, err := dev.OpenDomain(filepath.Join(dir, tc.device+tc.state.String()), true)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			q, err := dom.CreateRcvQP()
			if err != nil {
				t.Fatalf("%s: create: %v", name, err)
			}
			if err := dom.MoveQP(q); err != nil {
				t.Errorf("%s: MoveQP: %v", name, err)
			}
			q2, err := dom.CreateRcvQP()
			if err != nil {
				t.Fatalf("%s: create: %v", name, err)
			}
			// Refused by the kernel's table, or before it where the port
			// cannot give RTR an address.
			if want := cmp.Or(tc.rtrErrno, syscall.EINVAL); !errors.Is(dom.ModifyQP(q2, QPRTR), want) {
				t.Errorf("%s: RESET to RTR: %v, want %v", name, dom.ModifyQP(q2, QPRTR), want)
			}
			if err := dom.ModifyQP(q2, QPInit); err != nil {
				t.Errorf("%s: RESET to INIT: %v", name, err)
			}
			err = dom.ModifyQP(q2, QPRTR)
			if tc.rtrErrno == 0 && err != nil || tc.rtrErrno != 0 && !errors.Is(err, tc.rtrErrno) {
				t.Errorf("%s: INIT to RTR: %v, want %v", name, err, tc.rtrErrno)
			}
			for _, x := range []uint32{q, q2} {
				if d, err := dom.Unreg(x); err != nil || d == NotDestroyed {
					t.Errorf("%s: last unreg of %#x: %v, %v", name, x, d, err)
				}
			}
			if err := dom.Close(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if err := dev.Close(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	doubleCases["open-error"] = func(t *testing.T, arg string) {
		var c openErrorCase
		if err := json.Unmarshal([]byte(arg), &c); err != nil {
			t.Fatal(err)
		}
		dev, err := Open(Options{Provider: c.Provider, Device: c.Device, QPState: c.QPState})
		if err == nil {
			dev.Close()
			t.Fatalf("Open(%s, %q) succeeded, want %v", c.Provider, c.Device, c.Errno)
		}
		msg := err.Error()
		t.Logf("error: %s", msg)
		for _, w := range c.Want {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q lacks %q", msg, w)
			}
		}
		if !errors.Is(err, c.Errno) || errors.Is(err, ErrNotSupported) != c.NotSupp {
			t.Errorf("errors.Is: errno %v %v, ErrNotSupported %v (want %v)", c.Errno, errors.Is(err, c.Errno),
				errors.Is(err, ErrNotSupported), c.NotSupp)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("error is not one line")
		}
	}

	doubleCases["noxrc-domain"] = func(t *testing.T, _ string) {
		for _, p := range []struct {
			provider string
			errno    syscall.Errno
		}{{"rdma", syscall.EOPNOTSUPP}, {"legacy", syscall.ENOSYS}} {
			dev, err := Open(Options{Provider: p.provider, Device: "xbnoxrc0"})
			if err != nil {
				t.Fatalf("%s: %v", p.provider, err)
			}
			if dev.Info().XRC || dev.Info().OpenQP {
				t.Errorf("%s: info says XRC %v open_qp %v", p.provider, dev.Info().XRC, dev.Info().OpenQP)
			}
			_, err = dev.OpenDomain(filepath.Join(t.TempDir(), "dom"), true)
			if !errors.Is(err, p.errno) || !strings.Contains(err.Error(), "device xbnoxrc0 lacks XRC") {
				t.Errorf("%s: OpenDomain = %v, want %v naming the device", p.provider, err, p.errno)
			}
			if err := dev.Close(); err != nil {
				t.Error(err)
			}
		}
	}

	doubleCases["rdma-device"] = func(t *testing.T, _ string) {
		if lib := rdmaLibrary(); !strings.Contains(lib, "fakeverbs") {
			t.Fatalf("libibverbs is %s, not the double", lib)
		}
		dev, err := Open(Options{Provider: "rdma"})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		in := dev.Info()
		want := DeviceInfo{Name: "xbfake0", Provider: "rdma", XRC: true, OpenQP: true, LegacyAPI: true,
			Semantics: "upstream", Registrant: RegistrantHandle, FWVer: "99.1.0", HWVer: "0x1", VendorID: 0xfa4e, VendorPartID: 4242,
			NodeGUID: "fa4e:0000:0000:0100", MaxQP: DefaultSimMaxQPs, Ports: 1, Driver: "xrcbench_fake",
			NUMANode: 0, Library: "xrcbench fakeverbs (test double)", TestDouble: true,
			PortInfo: []PortInfo{{Port: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "InfiniBand",
				GIDs: []GIDEntry{{Index: 0, Type: "IB", Address: "fe80::fa4e:0:0:100"}}}},
			// Open's default QP state is reset: the automatic port is
			// found, no GID is needed (InfiniBand: the LID).
			Path: &PathInfo{Port: 1, GIDIndex: -1}}
		got := in
		got.Extra, got.Capabilities, got.BOM = nil, nil, nil // checked below, from Devices and the bill of materials
		if !jsonEqual(got, want) {
			t.Errorf("info:\n got %+v\nwant %+v", got, want)
		}
		// The bill of materials, read through the double's own sysfs as
		// on an adapter: driver module and version, PSID, PCIe link.
		wantBOM := results.DeviceBOM{Driver: "xrcbench_fake", DriverVersion: "xrcbench-fakeverbs-1",
			Library: in.BOM.Library, LibraryVersion: "xrcbench fakeverbs (test double)", FWVer: "99.1.0",
			BoardID: "XRCBENCH_FAKE_0001", HCAType: "xrcbench fakeverbs", LinkSpeed: "16.0 GT/s PCIe", LinkWidth: "16",
			NUMANode: "0", TestDoubleCost: cmp.Or(os.Getenv("XRCBENCH_FAKEVERBS_COST"), "none")}
		if in.BOM == nil || *in.BOM != wantBOM || !strings.HasSuffix(in.BOM.Library, "fakeverbs/libibverbs.so.1") {
			t.Errorf("bom:\n got %+v\nwant %+v", in.BOM, wantBOM)
		}
		if in.Extra["pci"] != "0000:fa:00.0" || in.Extra["board_id"] != "XRCBENCH_FAKE_0001" {
			t.Errorf("extra: %v", in.Extra)
		}

		// Devices lists all three, each with what it can do.
		all, err := Devices()
		if err != nil {
			t.Fatal(err)
		}
		caps := map[string][3]bool{}
		for _, d := range all {
			caps[d.Name] = [3]bool{d.XRC, d.OpenQP, d.LegacyAPI}
		}
		wantCaps := map[string][3]bool{"xbfake0": {true, true, true}, "xbnoxrc0": {false, false, false},
			"xbqedr0": {true, false, true}}
		if !jsonEqual(caps, wantCaps) {
			t.Errorf("Devices caps (xrc, open_qp, legacy) = %v, want %v", caps, wantCaps)
		}
		// Each capability was found out by calling it, and says what the
		// call returned: the double fills every op slot as libibverbs
		// does, so a pointer test would say yes to all three.
		how := map[string]string{}
		for _, d := range all {
			for _, c := range d.Capabilities {
				how[d.Name+" "+c.Name] = fmt.Sprintf("%v: %s", c.Supported, c.How)
			}
		}
		for key, want := range map[string]string{
			"xbfake0 open_xrcd":     "true: ibv_open_xrcd opened a scratch domain",
			"xbfake0 create_qp_ex":  "true: ibv_create_qp_ex(IBV_QPT_XRC_RECV) created a QP",
			"xbfake0 open_qp":       "true: ibv_open_qp of QP number 0xffffff (no QP has it) in the scratch domain failed EINVAL, not EOPNOTSUPP",
			"xbqedr0 create_qp_ex":  "true: ibv_create_qp_ex(IBV_QPT_XRC_RECV) created a QP",
			"xbqedr0 open_qp":       "false: ibv_open_qp of QP number 0xffffff (no QP has it) in the scratch domain failed EOPNOTSUPP: the provider does not implement it",
			"xbnoxrc0 open_xrcd":    "false: ibv_open_xrcd of a scratch domain (an anonymous file) failed EOPNOTSUPP",
			"xbnoxrc0 create_qp_ex": "false: not probed: no scratch XRC domain",
		} {
			if !strings.HasPrefix(how[key], want) {
				t.Errorf("%s: %q, want it to start %q", key, how[key], want)
			}
		}
	}

	doubleCases["rdma-handles"] = func(t *testing.T, _ string) {
		// The C handle table under load: many QPs (growth, probing),
		// many handles on one QP (the spill stack), and deletion in any
		// order (backward-shift deletion), checked against a fresh
		// registrant's view of which QPs still exist.
		dir := t.TempDir()
		open := func() *Domain {
			dev, err := Open(Options{Provider: "rdma"})
			if err != nil {
				t.Fatal(err)
			}
			dom, err := dev.OpenDomain(filepath.Join(dir, "dom"), true)
			if err != nil {
				t.Fatal(err)
			}
			return dom
		}
		closeDom := func(m *Domain) {
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := m.Device().Close(); err != nil {
				t.Fatal(err)
			}
		}
		a, probe := open(), open()
		const nQP = 700
		b := NewBatch(nQP)
		if failed, err := a.RunBatch(OpCreate, b, nQP); err != nil || failed != 0 {
			t.Fatalf("create batch: %d failed, %v (first errno %v)", failed, err, b.Errno(0))
		}
		qpns := append([]uint32(nil), b.QPNs...)
		// 20 more handles on every 7th QP.
		var extra int
		for i := 0; i < nQP; i += 7 {
			for k := 0; k < 20; k++ {
				if err := a.Reg(qpns[i]); err != nil {
					t.Fatalf("reg %d of qp %#x: %v", k, qpns[i], err)
				}
				extra++
			}
		}
		if got := rdmaDomainHandles(a); got != nQP+extra {
			t.Fatalf("handles = %d, want %d", got, nQP+extra)
		}
		if err := a.Close(); !errors.Is(err, syscall.EBUSY) {
			t.Fatalf("close with handles = %v, want EBUSY", err)
		}
		// Unreg in a scattered order; a QP dies only with its last handle.
		for pass := 0; pass < 21; pass++ {
			for j := 0; j < nQP; j++ {
				i := (j * 389) % nQP // 389 is prime to 700: a permutation
				if i%7 != 0 && pass > 0 {
					continue
				}
				if _, err := a.Unreg(qpns[i]); err != nil {
					t.Fatalf("pass %d unreg qp %#x: %v", pass, qpns[i], err)
				}
			}
			if pass == 0 || pass == 20 {
				for _, i := range []int{0, 1, 7, 699} {
					wantAlive := i%7 == 0 && pass < 20
					err := probe.Reg(qpns[i])
					if alive := err == nil; alive != wantAlive {
						t.Fatalf("pass %d: qp %#x alive %v (%v), want %v", pass, qpns[i], alive, err, wantAlive)
					}
					if err == nil {
						probe.Unreg(qpns[i])
					}
				}
			}
		}
		if got := rdmaDomainHandles(a); got != 0 {
			t.Fatalf("handles after unregs = %d", got)
		}
		if _, err := a.Unreg(qpns[0]); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("unreg without a handle = %v, want EINVAL", err)
		}
		closeDom(a)
		closeDom(probe)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// pathCase is one choice of port and GID through the double: what the
// opened device says it uses, and what the double saw in the RTR modify
// (its state folder's rtr-<device> file, written when the device closes),
// or the error a bad choice gets.
type pathCase struct {
	Device   string
	Port     int
	GID      *int
	Path     *PathInfo
	RTR      string // "port P lid L" or "port P sgid_index I"
	Err      string // a bad choice: what the one line says
	ErrState QPState
}

func gidIndex(i int) *int { return &i }

// TestDoublePathChoice: both providers honour --ib-port and --gid-index
// (Options.Port, GIDIndex) on a two-port InfiniBand device and a RoCE
// device with several GIDs per port, choose automatically as documented
// (the first ACTIVE port; on RoCE the first RoCE v2 GID), and refuse a
// port or GID the device lacks, whatever the QP state, as ErrBadPath.
func TestDoublePathChoice(t *testing.T) {
	for _, p := range []string{"rdma", "legacy"} {
		t.Run(p, func(t *testing.T) {
			runInDouble(t, "path-choice", "xbtwo0:ports=3:down=3,xbroce0:roce:ports=2", p)
		})
	}
}

func init() {
	doubleCases["path-choice"] = func(t *testing.T, provider string) {
		state := os.Getenv("XRCBENCH_FAKEVERBS_DIR")
		cases := []pathCase{
			{Device: "xbtwo0", Path: &PathInfo{Port: 1, GIDIndex: -1}, RTR: "port 1 lid 1"},
			{Device: "xbtwo0", Port: 2, Path: &PathInfo{Port: 2, PortChosen: true, GIDIndex: -1}, RTR: "port 2 lid 2"},
			{Device: "xbtwo0", Port: 2, GID: gidIndex(0), Path: &PathInfo{Port: 2, PortChosen: true, GIDIndex: 0,
				GIDType: "IB", GID: "fe80::fa4e:0:0:101", GIDChosen: true}, RTR: "port 2 sgid_index 0"},
			{Device: "xbroce0", Path: &PathInfo{Port: 1, GIDIndex: 1, GIDType: "RoCE v2", GID: "fe80::fa4e:0:0:200"},
				RTR: "port 1 sgid_index 1"},
			{Device: "xbroce0", Port: 2, GID: gidIndex(2), Path: &PathInfo{Port: 2, PortChosen: true, GIDIndex: 2,
				GIDType: "RoCE v1", GID: "::ffff:192.0.2.18", GIDChosen: true}, RTR: "port 2 sgid_index 2"},
			{Device: "xbroce0", GID: gidIndex(5), Path: &PathInfo{Port: 1, GIDIndex: 5, GIDType: "RoCE v2",
				GID: "2001:db8::11", GIDChosen: true}, RTR: "port 1 sgid_index 5"},
			{Device: "xbtwo0", Port: 4, Err: "device xbtwo0 has no port 4 (--ib-port 4): its ports are 1 to 3", ErrState: QPRTR},
			{Device: "xbtwo0", Port: 4, Err: "has no port 4", ErrState: QPReset},
			{Device: "xbtwo0", Port: 3, Err: "port 3 is DOWN, not ACTIVE (--ib-port 3): choose an ACTIVE port (ACTIVE: 1, 2;", ErrState: QPInit},
			{Device: "xbroce0", GID: gidIndex(8), Err: "--gid-index 8 is past the GID table of its port or an empty entry (port 1 has entries 0, 1, 2, 3, 4, 5)", ErrState: QPRTR},
			{Device: "xbroce0", GID: gidIndex(6), Err: "--gid-index 6 is past the GID table", ErrState: QPReset},
		}
		for i, c := range cases {
			opts := Options{Provider: provider, Device: c.Device, Port: c.Port, GIDIndex: c.GID, QPState: QPRTR}
			if c.Err != "" {
				opts.QPState = c.ErrState
				dev, err := Open(opts)
				if err == nil {
					dev.Close()
					t.Errorf("case %d: %s port %d gid %v opened, want %q", i, c.Device, c.Port, c.GID, c.Err)
					continue
				}
				if !strings.Contains(err.Error(), c.Err) || !errors.Is(err, ErrBadPath) || strings.Contains(err.Error(), "\n") {
					t.Errorf("case %d: %v (ErrBadPath %v), want one line with %q", i, err, errors.Is(err, ErrBadPath), c.Err)
				}
				continue
			}
			dev, err := Open(opts)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if got := dev.Info().Path; !jsonEqual(got, c.Path) {
				t.Errorf("case %d: path %+v, want %+v", i, got, c.Path)
			}
			dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "dom"), true)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(state, "rtr-"+c.Device))
			q, err := dom.CreateRcvQP()
			if err == nil {
				err = dom.MoveQP(q)
			}
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if _, err := dom.Unreg(q); err != nil {
				t.Error(err)
			}
			if err := dom.Close(); err != nil {
				t.Error(err)
			}
			if err := dev.Close(); err != nil {
				t.Error(err)
			}
			// The double writes the record when the context closes, not
			// inside the timed modify.
			if got, err := os.ReadFile(filepath.Join(state, "rtr-"+c.Device)); err != nil || strings.TrimSpace(string(got)) != c.RTR {
				t.Errorf("case %d: the double's RTR used %q (%v), want %q", i, got, err, c.RTR)
			}
		}
	}
}
