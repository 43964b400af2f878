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
)

// TestRunDeviceWithoutXRC: a run named at a device without XRC (what
// soft-RoCE is under make vmtest, here the double's xbnoxrc0) is a
// configuration the device cannot run: refused before anything is
// written, in one line naming the device and the capability, exit 2, as
// a device name none has is. Before, the worker failed at its domain
// open with a private path in the message; then the run failed (exit 1)
// and wrote a failed folder of nothing.
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
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
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
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("refused, yet %s exists (%v)", out, err)
	}
	// A name no device has is refused the same way.
	cmd = exec.Command(bin, "run", "--provider", "rdma", "--device", "mlx5_0", "--duration", "1s", "--warmup", "0s", "--out", out)
	cmd.Env = testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbnoxrc0:noxrc")
	e.Reset()
	cmd.Stderr = &e
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(e.String(), `no RDMA device named "mlx5_0" (have xbfake0, xbnoxrc0 (no XRC))`) {
		t.Errorf("--device mlx5_0: %v, stderr %q: want exit 2 naming the devices there are", err, e.String())
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("refused, yet %s exists (%v)", out, err)
	}
}
