package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

func TestDevicesGolden(t *testing.T) {
	devs := []verbs.DeviceInfo{
		{Name: "mlx5_0", XRC: true, OpenQP: true, FWVer: "16.35.2000", Ports: 1, NUMANode: 0, Driver: "mlx5_core",
			Library: "rdma-core 44.0", Extra: map[string]string{"libibverbs": "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"},
			Capabilities: []verbs.Capability{{Name: "open_qp", Supported: true, How: "ibv_open_qp ... failed EINVAL"}}},
		{Name: "qedr0", XRC: true, LegacyAPI: true, FWVer: "8.59.1.0", Ports: 2, NUMANode: 1, Driver: "qede",
			Extra:        map[string]string{"legacy_symbols": "ibv_reg_xrc_rcv_qp@IBVERBS_1.1"},
			Capabilities: []verbs.Capability{{Name: "open_qp", How: "ibv_open_qp ... failed EOPNOTSUPP"}}},
		{Name: "rxe0", FWVer: "", Ports: 1, NUMANode: -1, Driver: "rdma_rxe"},
		{Name: "mlx5_1", NUMANode: -1, Extra: map[string]string{"error": "cannot open /dev/infiniband/uverbs1 for device mlx5_1: permission denied"}},
	}
	var b bytes.Buffer
	if err := writeDevices(&b, devs); err != nil {
		t.Fatal(err)
	}
	golden(t, "devices.golden", b.Bytes())
}

// On a machine without RDMA (the system libibverbs, no kernel support):
// one clear line on stderr that says how to go on without hardware, exit
// 1, never a panic; with --json an empty list on stdout, for scripts.
func TestDevicesNoRDMA(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband_verbs"); err == nil {
		t.Skip("this machine has RDMA in its kernel")
	}
	if strings.Contains(os.Getenv("LD_LIBRARY_PATH"), "fakeverbs") {
		t.Skip("the libibverbs test double is loaded")
	}
	for _, tt := range []struct {
		args   []string
		stdout string
	}{{[]string{"devices"}, ""}, {[]string{"devices", "--json"}, "[]\n"}} {
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, tt.args)
		msg := stderr.String()
		if code != exitFailed || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "goroutine") || stdout.String() != tt.stdout {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, stdout %q and one line", tt.args, code, stdout.String(), msg, tt.stdout)
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
		t.Skipf("the libibverbs test double is not built (%s): run make fakeverbs (needs libibverbs-dev)", lib)
	}
	// Without the rdma build the ops cannot be seen: open_qp is "?". (Here,
	// in the parent, rdma may be unavailable for want of a device.)
	openQP := "?"
	if verbs.RDMABuilt {
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
				{"DEVICE", "XRC", "OPEN_QP", "LEGACY_API", "FW_VER", "PORTS", "NUMA", "DRIVER"},
				{"xbfake0", "yes", openQP, "yes", "99.1.0", "1", "0", "xrcbench_fake"},
				{"xbnoxrc0", "no", map[string]string{"yes": "no", "?": "?"}[openQP], "no", "99.1.0", "1", "0", "xrcbench_fake"},
				{"xbqedr0", "yes", map[string]string{"yes": "no", "?": "?"}[openQP], "yes", "99.1.0", "1", "0", "qedr"},
			}, []string{"libibverbs: xrcbench fakeverbs (test double)",
				"legacy XRC symbols: ibv_open_xrc_domain@IBVERBS_1.1 ibv_close_xrc_domain@IBVERBS_1.1"}, ""},
		{"permission denied", "xbfake0,xblocked0:eacces", []string{"devices"}, 0,
			[][]string{{"xblocked0", "?", "?", "?", "-", "-", "0", "xrcbench_fake"}},
			[]string{"note: xblocked0: cannot open /dev/infiniband/uverbs1", "permission denied"}, ""},
		{"json", "xbfake0", []string{"devices", "--json"}, 0, nil, []string{`"name": "xbfake0"`, `"xrc": true`, `"numa_node": 0`}, ""},
		{"no kernel RDMA", "none", []string{"devices"}, 1, nil, nil, "no RDMA device found"},
		{"no devices", "empty", []string{"devices"}, 1, nil, nil, "no RDMA device found: libibverbs lists none"},
		{"no devices json", "empty", []string{"devices", "--json"}, 1, nil, []string{"[]"}, "--provider sim"},
	}
	if openQP == "yes" {
		// How OPEN_QP was found out is printed: by calling ibv_open_qp.
		tests[0].stdout = append(tests[0].stdout, "probe: xbfake0 open_qp yes: ibv_open_qp of QP number 0xffffff",
			"probe: xbqedr0 open_qp no: ibv_open_qp of QP number 0xffffff (no QP has it) in the scratch domain failed EOPNOTSUPP")
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
