package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/verbs"
)

func TestDevicesGolden(t *testing.T) {
	devs := []verbs.DeviceInfo{
		{Name: "mlx5_0", XRC: true, OpenQP: true, FWVer: "16.35.2000", Ports: 1, NUMANode: 0, Driver: "mlx5_core",
			Library: "rdma-core 44.0", Extra: map[string]string{"libibverbs": "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"},
			Capabilities: []verbs.Capability{{Name: "open_qp", Supported: true, How: "ibv_open_qp ... failed EINVAL"}},
			PortInfo:     []verbs.PortInfo{{Port: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "InfiniBand"}},
			LiveQPs:      intp(3), LiveQPNs: []uint32{0, 1, 0x1a2b}},
		{Name: "qedr0", XRC: true, LegacyAPI: true, FWVer: "8.59.1.0", Ports: 2, NUMANode: 1, Driver: "qede",
			LegacyFlavor: verbs.FlavorOFED1,
			Extra: map[string]string{"legacy_symbols": "ibv_reg_xrc_rcv_qp@IBVERBS_1.1",
				"legacy_flavor_evidence": "a reg of a QP the same context created succeeded"},
			Capabilities: []verbs.Capability{{Name: "open_qp", How: "ibv_open_qp ... failed EOPNOTSUPP"}},
			PortInfo: []verbs.PortInfo{{Port: 1, State: "ACTIVE", ActiveMTU: 1024, LinkLayer: "Ethernet"},
				{Port: 2, State: "DOWN", LinkLayer: "Ethernet"}},
			LiveQPs: intp(0)},
		{Name: "rxe0", FWVer: "", Ports: 1, NUMANode: -1, Driver: "rdma_rxe",
			PortInfo: []verbs.PortInfo{{Port: 1, State: "ACTIVE", ActiveMTU: 1024, LinkLayer: "Ethernet"}}, LiveQPs: intp(1), LiveQPNs: []uint32{1}},
		{Name: "mlx5_1", NUMANode: -1, Extra: map[string]string{"error": "cannot open /dev/infiniband/uverbs1 for device mlx5_1: permission denied"},
			LiveQPsNote: "n/a: the kernel's RDMA netlink does not list mlx5_1"},
	}
	var b bytes.Buffer
	if err := writeDevices(&b, devs); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "devices.golden", b.Bytes())

	// No RDMA netlink at all: the reason once, not once per device.
	for i := range devs {
		devs[i].LiveQPs, devs[i].LiveQPNs, devs[i].LiveQPsNote = nil, nil, "n/a: the kernel has no RDMA netlink (socket NETLINK_RDMA: EPROTONOSUPPORT): ib_core is not loaded"
	}
	b.Reset()
	if err := writeDevices(&b, devs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "no RDMA netlink"); n != 1 {
		t.Errorf("the reason is said %d times, want once:\n%s", n, b.String())
	}
}

func intp(n int) *int { return &n }

// On a machine without RDMA (the system libibverbs, no kernel support):
// one clear line on stderr that says how to go on without hardware, exit
// 1, never a panic; with --json a document with no devices on stdout,
// for scripts.
func TestDevicesNoRDMA(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband_verbs"); err == nil {
		t.Skip("this machine has RDMA in its kernel")
	}
	if strings.Contains(os.Getenv("LD_LIBRARY_PATH"), "fakeverbs") {
		t.Skip("the libibverbs test double is loaded")
	}
	for _, tt := range []struct {
		args []string
		json bool
	}{{[]string{"devices"}, false}, {[]string{"devices", "--json"}, true}} {
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, tt.args)
		msg := stderr.String()
		if code != exitFailed || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "goroutine") || (stdout.Len() > 0) != tt.json {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, a document on stdout only with --json, and one line", tt.args, code, stdout.String(), msg)
		}
		if tt.json {
			var doc devicesJSON
			decodeOne(t, stdout.String(), &doc)
			if doc.Schema != jsonSchema || doc.Status != "failed" || doc.Devices == nil || len(doc.Devices) != 0 || !strings.Contains(doc.Error, "no RDMA device found") {
				t.Errorf("%v: document %+v: want status failed, devices [] and the error", tt.args, doc)
			}
		}
		for _, want := range []string{"no RDMA device found", "--provider sim", "make fakeverbs"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, msg, want)
			}
		}
	}
}

const devicesChildEnv = "XRCBENCH_TEST_DEVICES_ARGS"

// TestDevicesChild is the child side of TestDevicesDouble: the CLI in a
// process that loaded the double.
func TestDevicesChild(t *testing.T) {
	raw := os.Getenv(devicesChildEnv)
	if raw == "" {
		t.Skip("runs only as a child process of TestDevicesDouble")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	os.Exit(run(os.Stdout, os.Stderr, args))
}

func TestDevicesDouble(t *testing.T) {
	lib, err := filepath.Abs(filepath.Join("..", "..", "build", "fakeverbs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(lib, "libibverbs.so.1")); err != nil {
		testenv.Skip(t, testenv.Double, "it is not built (%s): run make fakeverbs (needs libibverbs-dev)", lib)
	}
	// Without cgo the ops cannot be seen: open_qp is "?". (Here,
	// in the parent, rdma may be unavailable for want of a device.)
	openQP := "?"
	if verbs.CgoBuilt {
		openQP = "yes"
	}
	tests := []struct {
		name, devices string
		args          []string
		code          int
		rows          [][]string // whitespace-separated fields of table rows
		stdout        []string
		stderr        string
	}{
		{"three devices", "xbfake0,xbnoxrc0:noxrc,xbqedr0:noopenqp:driver=qedr", []string{"devices"}, 0,
			[][]string{
				{"DEVICE", "XRC", "OPEN_QP", "LEGACY_API", "FW_VER", "PORTS", "NUMA", "DRIVER", "LIVE_QPS"},
				// The double's devices are no kernel devices: the kernel
				// lists no QPs of theirs, or has no RDMA netlink at all.
				{"xbfake0", "yes", openQP, "yes", "99.1.0", "1", "0", "xrcbench_fake", "n/a"},
				{"xbnoxrc0", "no", map[string]string{"yes": "no", "?": "?"}[openQP], "no", "99.1.0", "1", "0", "xrcbench_fake", "n/a"},
				{"xbqedr0", "yes", map[string]string{"yes": "no", "?": "?"}[openQP], "yes", "99.1.0", "1", "0", "qedr", "n/a"},
			}, []string{"libibverbs: xrcbench fakeverbs (test double)",
				"legacy XRC symbols: ibv_open_xrc_domain@IBVERBS_1.1 ibv_close_xrc_domain@IBVERBS_1.1",
				"port: xbfake0/1 ACTIVE, active MTU 4096, InfiniBand", "note: live QPs n/a: "}, ""},
		{"roce port down", "xbroce0:roce:portdown", []string{"devices"}, 0, nil,
			[]string{"port: xbroce0/1 DOWN, active MTU 1024, Ethernet"}, ""},
		// Each port's GID table, read from sysfs, to choose --ib-port and
		// --gid-index from: RoCE v1 and v2 per address, empty entries left out.
		{"gid tables", "xbtwo0:ports=2:down=2,xbroce0:roce", []string{"devices"}, 0, nil,
			[]string{"port: xbtwo0/1 ACTIVE, active MTU 4096, InfiniBand\n  gid 0: IB fe80::fa4e:0:0:100\n" +
				"port: xbtwo0/2 DOWN, active MTU 4096, InfiniBand\n  gid 0: IB fe80::fa4e:0:0:101\n",
				"port: xbroce0/1 ACTIVE, active MTU 1024, Ethernet\n  gid 0: RoCE v1 fe80::fa4e:0:0:200\n" +
					"  gid 1: RoCE v2 fe80::fa4e:0:0:200\n  gid 2: RoCE v1 ::ffff:192.0.2.17\n  gid 3: RoCE v2 ::ffff:192.0.2.17\n" +
					"  gid 4: RoCE v1 2001:db8::11\n  gid 5: RoCE v2 2001:db8::11\nnote"}, ""},
		{"permission denied", "xbfake0,xblocked0:eacces", []string{"devices"}, 0,
			[][]string{{"xblocked0", "?", "?", "?", "-", "-", "0", "xrcbench_fake", "n/a"}},
			[]string{"note: xblocked0: cannot open /dev/infiniband/uverbs1", "permission denied"}, ""},
		{"json", "xbfake0", []string{"devices", "--json"}, 0, nil, []string{`"name": "xbfake0"`, `"xrc": true`, `"numa_node": 0`,
			`"port_info": [`, `"state": "ACTIVE"`, `"active_mtu": 4096`, `"link_layer": "InfiniBand"`, `"live_qps_note": "n/a: `,
			`"gids": [`, `"type": "IB"`, `"address": "fe80::fa4e:0:0:100"`}, ""},
		{"no kernel RDMA", "none", []string{"devices"}, 1, nil, nil, "no RDMA device found"},
		{"no devices", "empty", []string{"devices"}, 1, nil, nil, "no RDMA device found: libibverbs lists none"},
		{"no devices json", "empty", []string{"devices", "--json"}, 1, nil, []string{"[]"}, "--provider sim"},
	}
	if openQP == "yes" {
		// How OPEN_QP was found out is printed: by calling ibv_open_qp.
		tests[0].stdout = append(tests[0].stdout, "probe: xbfake0 open_qp yes: ibv_open_qp of QP number 0xffffff",
			"probe: xbqedr0 open_qp no: ibv_open_qp of QP number 0xffffff (no QP has it) in the scratch domain failed EOPNOTSUPP",
			// XRC domains without ibv_open_qp are named for what they mean.
			"note: xbqedr0: XRC domains but no ibv_open_qp (its provider fails it EOPNOTSUPP): no second process can open its XRC receive QPs; "+
				"run --provider rdma refuses it, conform checks S1 and S11 only")
		tests = append(tests, struct {
			name, devices string
			args          []string
			code          int
			rows          [][]string
			stdout        []string
			stderr        string
		}{"json, no open_qp", "xbqedr0:noopenqp:driver=qedr", []string{"devices", "--json"}, 0, nil,
			[]string{`"name": "xbqedr0"`, `"xrc": true`, `"open_qp": false`, `"name": "open_qp",`}, ""})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(tt.args)
			cmd := exec.Command(os.Args[0], "-test.run=^TestDevicesChild$")
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "XRCBENCH_FAKEVERBS_DIR="+filepath.Join(t.TempDir(), "state"),
				"XRCBENCH_FAKEVERBS_DEVICES="+tt.devices, devicesChildEnv+"="+string(args))
			code, stdout, stderr := runProcess(cmd)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			lines := map[string][]string{}
			for _, l := range strings.Split(stdout, "\n") {
				if f := strings.Fields(l); len(f) > 0 {
					lines[f[0]] = f
				}
			}
			for _, row := range tt.rows {
				if got := lines[row[0]]; strings.Join(got, " ") != strings.Join(row, " ") {
					t.Errorf("row %q, want %q\n%s", got, row, stdout)
				}
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if tt.stderr == "" && stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			if tt.stderr != "" && (!strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1) {
				t.Errorf("stderr %q, want one line containing %q", stderr, tt.stderr)
			}
		})
	}
}
