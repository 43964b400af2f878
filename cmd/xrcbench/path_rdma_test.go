package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
)

// TestRunPathChoice: perftest's -i/--ib-port and -x/--gid-index reach the
// provider's RTR path through the double (a two-port device whose second
// port is used, a RoCE device's IPv4-mapped RoCE v2 GID), are recorded in
// result.json (asked: config.provider_options; used: environment.device)
// and the rerun command, and a port or GID the device lacks is bad input:
// one line, exit 2, before anything runs.
func TestRunPathChoice(t *testing.T) {
	judgesNoTime(t)
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	env := testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbtwo0:ports=3:down=3,xbroce0:roce")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		opts     map[string]string
		device   map[string]any
		stderr   string
		rerunHas []string
	}{
		{"second port", []string{"--provider", "rdma", "--device", "xbtwo0", "-i", "2"}, exitOK,
			map[string]string{"ib_port": "2"}, map[string]any{"port": 2.0}, "", []string{"--ib-port=2"}},
		{"roce v2 ipv4 gid", []string{"--provider", "legacy", "--device", "xbroce0", "--gid-index", "3"}, exitOK,
			map[string]string{"gid_index": "3"}, map[string]any{"port": 1.0, "gid_index": 3.0, "gid": "::ffff:192.0.2.17", "gid_type": "RoCE v2"},
			"", []string{"--gid-index=3", "--provider=legacy"}},
		{"automatic roce", []string{"--provider", "rdma", "--device", "xbroce0"}, exitOK,
			nil, map[string]any{"port": 1.0, "gid_index": 1.0, "gid_type": "RoCE v2"}, "", nil},
		{"no such port", []string{"--provider", "rdma", "--device", "xbtwo0", "-i", "5"}, exitUsage, nil, nil,
			"device xbtwo0 has no port 5 (--ib-port 5): its ports are 1 to 3", nil},
		{"port down", []string{"--provider", "legacy", "--device", "xbtwo0", "--ib-port", "3"}, exitUsage, nil, nil,
			"port 3 is DOWN, not ACTIVE", nil},
		{"gid past the table", []string{"--provider", "rdma", "--device", "xbroce0", "-x", "9"}, exitUsage, nil, nil,
			"--gid-index 9 is past the GID table", nil},
		{"not a verbs provider", []string{"--provider", "sim", "-i", "1"}, exitUsage, nil, nil,
			"--ib-port and --gid-index apply to --provider rdma and legacy only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, append([]string{"run", "--quiet", "--workload", "lifecycle", "--qps", "2",
				"--iterations", "3", "--warmup", "0s", "--out", out}, tc.args...)...)
			cmd.Env = env
			code, _, stderr := runProcess(cmd)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if tc.code != exitOK {
				if !strings.Contains(stderr, tc.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("stderr %q: want one line with %q", stderr, tc.stderr)
				}
				return
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.opts {
				if r.Config.ProviderOpts[k] != v {
					t.Errorf("config.provider_options[%s] = %q, want %q", k, r.Config.ProviderOpts[k], v)
				}
			}
			// As result.json writes them: the device's facts by name.
			var raw struct {
				Environment struct {
					Device map[string]any `json:"device"`
				} `json:"environment"`
			}
			if b, err := os.ReadFile(filepath.Join(out, results.FileName)); err != nil || json.Unmarshal(b, &raw) != nil {
				t.Fatalf("result.json: %v", err)
			}
			for k, v := range tc.device {
				if raw.Environment.Device[k] != v {
					t.Errorf("environment.device[%s] = %v, want %v", k, raw.Environment.Device[k], v)
				}
			}
			rerun := strings.Join(r.Config.CommandLine, " ")
			for _, w := range tc.rerunHas {
				if !strings.Contains(rerun, w) {
					t.Errorf("command line %q lacks %s", rerun, w)
				}
			}
		})
	}
}

// TestRunUnconfirmedDestroys: a run on rdma asks the device itself
// (through the double, its own device list; on a host, RDMA netlink)
// which of the QPs it created are still there after their destruction
// was reported. A device whose destroys fail silently (ibv_destroy_qp
// returns 0) gives a count in result.json and a warning; a good one 0.
func TestRunUnconfirmedDestroys(t *testing.T) {
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	env := testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbsilent0:silentdestroy")
	for _, tc := range []struct {
		device string
		silent bool
	}{{"xbfake0", false}, {"xbsilent0", true}} {
		t.Run(tc.device, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, "run", "--progress", "never", "--provider", "rdma", "--device", tc.device, "--workload", "lifecycle",
				"--qps", "2", "--iterations", "3", "--warmup", "0s", "--out", out)
			cmd.Env = env
			code, _, stderr := runProcess(cmd)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			l := r.Leaks
			if l == nil || l.DestroysUnconfirmed == nil || l.DeviceList != "the test double's device" {
				t.Fatalf("leak check %+v: want a count from the test double's device", l)
			}
			created := int(r.Ops[results.OpCreate].Count)
			want := 0
			if tc.silent {
				want = created
			}
			if *l.DestroysUnconfirmed != want || len(l.UnconfirmedQPNs) != want || created == 0 {
				t.Errorf("destroys_unconfirmed %d (%d numbers), want %d of the %d created", *l.DestroysUnconfirmed, len(l.UnconfirmedQPNs), want, created)
			}
			// The terminal's one line is the whole text or names the kind;
			// result.json has the whole text.
			said := strings.Contains(stderr, "not confirmed") || strings.Contains(stderr, results.WarnDestroyUnconfirmed)
			warned := said && strings.Contains(strings.Join(results.WarningTexts(r.Warnings), "\n"), "QP destruction(s) not confirmed")
			if warned != tc.silent {
				t.Errorf("warning given %v, want %v: %s", warned, tc.silent, stderr)
			}
		})
	}
}
