package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
)

// TestRunDeviceWithoutXRC: a run named at a device without XRC (what
// soft-RoCE is under make vmtest, here the double's xbnoxrc0) fails before
// any worker starts, in one line naming the device and the capability,
// exit 1, and its failed result still describes the device. Before, the
// worker failed at its domain open with a private path in the message,
// and the result's device had no name.
func TestRunDeviceWithoutXRC(t *testing.T) {
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--provider", "rdma", "--device", "xbnoxrc0", "--duration", "1s", "--warmup", "0s", "--out", out)
	cmd.Env = testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbnoxrc0:noxrc")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(e.String()), "\n") {
		if !strings.HasPrefix(l, "warning: ") { // the build's own warnings, not the failure
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "device xbnoxrc0 lacks XRC") ||
		!strings.Contains(lines[0], "IBV_DEVICE_XRC") || strings.Contains(lines[0], "domain") {
		t.Errorf("stderr %q, want one line naming xbnoxrc0 and IBV_DEVICE_XRC, and no domain file", lines)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusFailed || !strings.Contains(r.Error, "lacks XRC") {
		t.Errorf("status %q error %q, want failed: lacks XRC", r.Status, r.Error)
	}
	d := r.Environment.Device
	if d == nil || d.Name != "xbnoxrc0" || d.XRC || d.Semantics != "upstream" || r.Environment.Provider != "rdma" {
		t.Errorf("environment: provider %q device %+v, want xbnoxrc0 described", r.Environment.Provider, d)
	}
	if len(r.Workers) != 0 {
		t.Errorf("%d workers started for a device that can measure nothing", len(r.Workers))
	}
}

// TestRunDeviceNameNoneHas: a device name no device has is bad input,
// refused before anything is written (exit 2, one line naming the devices
// there are), as a port the device lacks is; it was exit 1 and a failed
// folder of nothing.
func TestRunDeviceNameNoneHas(t *testing.T) {
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--provider", "rdma", "--device", "mlx5_0", "--duration", "1s", "--warmup", "0s", "--out", out)
	cmd.Env = testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbnoxrc0:noxrc")
	var e bytes.Buffer
	cmd.Stderr = &e
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 || strings.Count(e.String(), "\n") != 1 ||
		!strings.Contains(e.String(), `no RDMA device named "mlx5_0" (have xbfake0, xbnoxrc0 (no XRC))`) {
		t.Errorf("--device mlx5_0: %v, stderr %q: want exit 2 and one line naming the devices there are", err, e.String())
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("refused, yet %s exists (%v)", out, err)
	}
}
