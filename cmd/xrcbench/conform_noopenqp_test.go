package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/conform"
	"github.com/xrcbench/xrcbench/internal/testdouble"
)

// TestConformNoOpenQP: conform named at a device whose provider has XRC
// domains but no ibv_open_qp (qedr; the double's noopenqp) checks what the
// device can do (S1, its destruction confirmed through the device's own
// list; S11 on the host's device without XRC) and says every other check
// cannot run, and why: skipped, neither passed nor failed, exit 0. Before,
// conform stopped at the open with one line and exit 1, naming no check.
func TestConformNoOpenQP(t *testing.T) {
	judgesNoTime(t)
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	const devices = "xbqedr0:noopenqp:driver=qedr,xbnoxrc0:noxrc:driver=qedr"
	can := map[string]string{"S1": conform.CheckPass, "S11": conform.CheckPass}
	for _, tc := range []struct {
		name string
		json bool
	}{{"table", false}, {"json", true}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"conform", "--provider", "rdma", "--device", "xbqedr0"}
			if tc.json {
				args = append(args, "--json")
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), devices)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("exit %v, want 0\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
			}
			status := map[string]string{}
			detail := map[string]string{}
			if tc.json {
				var rep conform.ConformReport
				if err := json.Unmarshal(o.Bytes(), &rep); err != nil {
					t.Fatalf("%v\n%s", err, o.String())
				}
				if !strings.Contains(rep.NoOpenQP, "device xbqedr0 (driver qedr) has XRC domains, but its rdma-core provider does not implement ibv_open_qp") {
					t.Errorf("no_open_qp %q", rep.NoOpenQP)
				}
				for _, c := range rep.Checks {
					status[c.ID], detail[c.ID] = c.Status, c.Detail
				}
			} else {
				if !strings.Contains(o.String(), "no open_qp: device xbqedr0 (driver qedr) has XRC domains") ||
					!strings.Contains(o.String(), "2 passed, 0 failed, 13 skipped") ||
					!strings.Contains(o.String(), "destructions: 1 destruction(s) confirmed") {
					t.Errorf("stdout:\n%s", o.String())
				}
				for _, l := range strings.Split(o.String(), "\n") {
					if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[0], "S") {
						status[f[0]] = strings.ToLower(f[1])
						detail[f[0]] = l
					}
				}
			}
			if len(status) != 15 {
				t.Fatalf("%d checks, want 15: %v", len(status), status)
			}
			for id, got := range status {
				if want, ok := can[id]; ok {
					if got != want {
						t.Errorf("%s: %s, want %s: %s", id, got, want, detail[id])
					}
					continue
				}
				if got != conform.CheckSkip || !strings.Contains(detail[id], "cannot run: the provider has XRC domains but no ibv_open_qp") {
					t.Errorf("%s: %s %q, want skip: cannot run", id, got, detail[id])
				}
			}
		})
	}
}
